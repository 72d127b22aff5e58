import { ApiPropertyOptional } from '@nestjs/swagger';
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
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false, maxDecimalPlaces: 2 })
  @Min(0)
  @Max(SCORE_MAX)
  score?: number | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: FEEDBACK_MAX_LENGTH,
    description: 'null clears',
  })
  @IsOptional()
  @IsString()
  @MaxLength(FEEDBACK_MAX_LENGTH)
  feedback?: string | null;

  @ApiPropertyOptional({ description: 'true needs a score (given here or already set)' })
  @ValidateIf((_dto, value) => value !== undefined)
  @IsBoolean()
  isExemplary?: boolean;
}
