import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsNumber,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { MaxDecimals } from '../../common/validation/validators';
import { RUBRIC_CRITERIA_MAX } from '../../submissions/dto/grade-submission.dto';

export const RUBRIC_LEVELS_MAX = 10;
export const CRITERION_TITLE_MAX = 200;
export const CRITERION_DESCRIPTION_MAX = 2_000;
export const LEVEL_TITLE_MAX = 100;
export const LEVEL_POINTS_MAX = 100_000;

const KEEP_ID =
  "The id of this part in the task's current rubric keeps it (and its assessments); absent, or any other " +
  'id, makes a new part with a new server-made id';

/** One level of a criterion as a rubric write gives it. */
export class RubricLevelInput {
  @ApiPropertyOptional({ format: 'uuid', description: KEEP_ID })
  @IsOptional()
  @IsUUID()
  id?: string;

  @ApiProperty({ minLength: 1, maxLength: LEVEL_TITLE_MAX })
  @Length(1, LEVEL_TITLE_MAX)
  @IsString()
  title: string;

  @ApiProperty({ minimum: 0, maximum: LEVEL_POINTS_MAX, description: 'At most two decimals' })
  // The decorator nearest the property is checked first: the type before the range.
  @Max(LEVEL_POINTS_MAX)
  @Min(0)
  @MaxDecimals(2)
  @IsNumber({ allowNaN: false, allowInfinity: false })
  points: number;
}

/** One criterion as a rubric write gives it. */
export class RubricCriterionInput {
  @ApiPropertyOptional({ format: 'uuid', description: KEEP_ID })
  @IsOptional()
  @IsUUID()
  id?: string;

  @ApiProperty({ minLength: 1, maxLength: CRITERION_TITLE_MAX })
  @Length(1, CRITERION_TITLE_MAX)
  @IsString()
  title: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: CRITERION_DESCRIPTION_MAX })
  @IsOptional()
  @MaxLength(CRITERION_DESCRIPTION_MAX)
  @IsString()
  description?: string | null;

  @ApiProperty({
    type: [RubricLevelInput],
    minItems: 1,
    maxItems: RUBRIC_LEVELS_MAX,
    description: 'Stored and answered by points, highest first (equal points keep the order given)',
  })
  @ValidateNested({ each: true })
  @Type(() => RubricLevelInput)
  @ArrayMaxSize(RUBRIC_LEVELS_MAX)
  @ArrayMinSize(1)
  @IsArray()
  levels: RubricLevelInput[];
}

/** `PUT /tasks/:taskId/rubric`: the whole rubric, replacing the current one. */
export class PutRubricDto {
  @ApiProperty({ type: [RubricCriterionInput], minItems: 1, maxItems: RUBRIC_CRITERIA_MAX })
  @ValidateNested({ each: true })
  @Type(() => RubricCriterionInput)
  @ArrayMaxSize(RUBRIC_CRITERIA_MAX)
  @ArrayMinSize(1)
  @IsArray()
  criteria: RubricCriterionInput[];
}

export class RubricLevelResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty()
  title: string;

  @ApiProperty({ example: 4 })
  points: number;
}

export class RubricCriterionResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty()
  title: string;

  @ApiProperty({ type: String, nullable: true })
  description: string | null;

  @ApiProperty({ type: [RubricLevelResponse], description: 'By points, highest first' })
  levels: RubricLevelResponse[];
}

export class RubricResponse {
  @ApiProperty({ format: 'uuid' })
  taskId: string;

  @ApiProperty({ type: [RubricCriterionResponse], description: 'In the order given' })
  criteria: RubricCriterionResponse[];

  @ApiProperty({ example: 20, description: "The sum of each criterion's highest level" })
  maxPoints: number;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;

  @ApiProperty({ format: 'date-time', description: 'The last replacement' })
  updatedAt: string;
}
