import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { MaxDecimals } from '../../common/validation/validators';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsNumber,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';

export const SCORE_MAX = 100_000;
export const FEEDBACK_MAX_LENGTH = 10_000;
/** A rubric has at most this many criteria, so an assessment at most this many entries. */
export const RUBRIC_CRITERIA_MAX = 30;
export const ASSESSMENT_COMMENT_MAX_LENGTH = 2_000;

/** The level chosen for one criterion of the task's rubric. */
export class RubricAssessmentInput {
  @ApiProperty({ format: 'uuid', description: "A criterion of the task's rubric, at most once per grading" })
  @IsUUID()
  criterionId: string;

  @ApiProperty({ format: 'uuid', description: 'One of the levels of that criterion' })
  @IsUUID()
  levelId: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: ASSESSMENT_COMMENT_MAX_LENGTH })
  @IsOptional()
  @MaxLength(ASSESSMENT_COMMENT_MAX_LENGTH)
  @IsString()
  comment?: string | null;
}

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

  @ApiPropertyOptional({
    type: [RubricAssessmentInput],
    maxItems: RUBRIC_CRITERIA_MAX,
    description:
      "The whole rubric assessment, replacing the previous one; [] clears it (the score stays). Without a score in the same request, the score becomes the sum of the chosen levels' points. The task must have a rubric",
  })
  @ValidateIf((_dto, value) => value !== undefined)
  @ValidateNested({ each: true })
  @Type(() => RubricAssessmentInput)
  @ArrayMaxSize(RUBRIC_CRITERIA_MAX)
  @IsArray()
  rubric?: RubricAssessmentInput[];
}

/** Body of PATCH …/exemplary: the flag alone, or nothing to toggle it (what the web client sends). */
export class MarkExemplaryDto {
  @ApiPropertyOptional({ description: 'true needs a score already given; absent: the flag is toggled' })
  @ValidateIf((_dto, value) => value !== undefined)
  @IsBoolean()
  isExemplary?: boolean;
}
