import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsEnum,
  IsNumber,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import { IsIsoTimestamp, Trim, trimmed } from '../../common/validation/validators';
import { PARSE_TEXT_MAX_LENGTH } from '../../ai/dto/parse-text.dto';
import { GradeRelease } from '../../submissions/grade-release';

export const TITLE_MAX_LENGTH = 200;
export const DESCRIPTION_MAX_LENGTH = 100_000;
export const BLOCKED_BY_MAX = 50;
export const TAGS_MAX = 20;
export const TAG_MAX_LENGTH = 32;

/** Optional, but null is not a value: validated whenever the field is present. */
const PresentNotNull = (): PropertyDecorator => ValidateIf((_object, value) => value !== undefined);

const lowerCaseAll = ({ value }: { value: unknown }): unknown =>
  Array.isArray(value)
    ? value.map((item: unknown) => (typeof item === 'string' ? item.toLowerCase() : item))
    : value;

/** The fields every task write shares (create, draft, update, publish). */
class TaskFieldsDto {
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: DESCRIPTION_MAX_LENGTH,
    description: 'Markdown; null clears',
  })
  @IsOptional()
  @IsString()
  @MaxLength(DESCRIPTION_MAX_LENGTH)
  description?: string | null;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Visible to members from then; null: at once',
  })
  @IsOptional()
  @IsIsoTimestamp()
  startAt?: string | null;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Deadline; null: none',
  })
  @IsOptional()
  @IsIsoTimestamp()
  dueAt?: string | null;

  @ApiPropertyOptional({ default: true })
  @PresentNotNull()
  @IsBoolean()
  allowLateSubmission?: boolean;

  @ApiPropertyOptional({
    enum: GradeRelease,
    enumName: 'GradeRelease',
    default: GradeRelease.IMMEDIATE,
    description:
      'MANUAL: members see their grades once released; switching to IMMEDIATE releases every grade',
  })
  @PresentNotNull()
  @IsEnum(GradeRelease)
  gradeRelease?: GradeRelease;

  @ApiPropertyOptional({
    type: [String],
    format: 'uuid',
    maxItems: BLOCKED_BY_MAX,
    description: 'Tasks of the same class a member must submit first; no cycles',
  })
  @PresentNotNull()
  @Transform(lowerCaseAll)
  @ArrayUnique()
  @IsUUID('all', { each: true })
  // Listed last, checked first (the pipe stops at the first error): ArrayUnique is quadratic, and a 1 MiB
  // body holds tens of thousands of elements.
  @ArrayMaxSize(BLOCKED_BY_MAX)
  @IsArray()
  blockedBy?: string[];
}

export class CreateTaskDto extends TaskFieldsDto {
  @ApiProperty({ minLength: 1, maxLength: TITLE_MAX_LENGTH })
  @Trim()
  @IsString()
  @Length(1, TITLE_MAX_LENGTH)
  title: string;
}

export class UpdateTaskDto extends TaskFieldsDto {
  @ApiPropertyOptional({ maxLength: TITLE_MAX_LENGTH, description: 'Must not be empty on a published task' })
  @PresentNotNull()
  @Trim()
  @IsString()
  @MaxLength(TITLE_MAX_LENGTH)
  title?: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: PARSE_TEXT_MAX_LENGTH,
    description: 'The free text to parse (drafts) or the task was parsed from; null clears',
  })
  @IsOptional()
  @IsString()
  @MaxLength(PARSE_TEXT_MAX_LENGTH)
  sourceText?: string | null;
}

/** Publication takes the fields of PATCH /tasks/:taskId, applied before publishing. */
export class PublishTaskDto extends UpdateTaskDto {}

/** A draft takes the fields of PATCH /tasks/:taskId, every one optional. */
export class CreateDraftDto extends UpdateTaskDto {}

export class UpdateTaskStateDto {
  @ApiPropertyOptional({
    type: [String],
    maxItems: TAGS_MAX,
    description: `Labels of 1 to ${TAG_MAX_LENGTH} characters`,
  })
  @PresentNotNull()
  @Transform(({ value }: { value: unknown }) => (Array.isArray(value) ? value.map(trimmed) : value))
  @ArrayUnique()
  @IsString({ each: true })
  @Length(1, TAG_MAX_LENGTH, { each: true })
  // Listed last, checked first, as for blockedBy: the size bound before the quadratic ArrayUnique.
  @ArrayMaxSize(TAGS_MAX)
  @IsArray()
  tags?: string[];

  @ApiPropertyOptional({ type: Number, nullable: true, description: 'Personal order; null clears' })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  sortOrder?: number | null;
}
