import { ApiPropertyOptional } from '@nestjs/swagger';
import { MaxDecimals } from '../../common/validation/validators';
import { IsBoolean, IsNumber, IsOptional, IsString, Max, MaxLength, Min, ValidateIf } from 'class-validator';

export const SCORE_MAX = 100_000;
export const FEEDBACK_MAX_LENGTH = 10_000;

/** Every field optional, at least one given (checked by the service); null clears score and feedback. */
export class GradeSubmissionDto {
  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 0,
    maximum: SCORE_MAX,
    description: 'At most two decimals; null removes the score',
  })
  // The decorator nearest the property is checked first: the type before the range.
  @IsOptional()
  @Max(SCORE_MAX)
  @Min(0)
  @MaxDecimals(2)
  @IsNumber({ allowNaN: false, allowInfinity: false })
  score?: number | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: FEEDBACK_MAX_LENGTH,
    description: 'null clears',
  })
  @IsOptional()
  @MaxLength(FEEDBACK_MAX_LENGTH)
  @IsString()
  feedback?: string | null;

  @ApiPropertyOptional({ description: 'true needs a score (given here or already set)' })
  @ValidateIf((_dto, value) => value !== undefined)
  @IsBoolean()
  isExemplary?: boolean;
}

/** Body of PATCH …/exemplary: the flag alone, or nothing to toggle it (what the web client sends). */
export class MarkExemplaryDto {
  @ApiPropertyOptional({ description: 'true needs a score already given; absent: the flag is toggled' })
  @ValidateIf((_dto, value) => value !== undefined)
  @IsBoolean()
  isExemplary?: boolean;
}
