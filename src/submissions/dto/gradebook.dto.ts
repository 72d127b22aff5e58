import { ApiProperty, ApiPropertyOptional, PickType } from '@nestjs/swagger';
import { IsOptional, Matches } from 'class-validator';
import { PageSize } from '../../common/validation/page-size';
import { SubmissionListEntryResponse } from './submission.response';

export const GRADEBOOK_PAGE_MAX = 200;
export const GRADEBOOK_PAGE_DEFAULT = 50;

/** Query of GET /classes/:classId/gradebook. */
export class GradebookQuery {
  @PageSize(GRADEBOOK_PAGE_MAX, GRADEBOOK_PAGE_DEFAULT)
  limit: number = GRADEBOOK_PAGE_DEFAULT;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page (opaque)' })
  @IsOptional()
  @Matches(/^[A-Za-z0-9_-]{1,4000}$/, { message: 'cursor is malformed' })
  cursor?: string;
}

export const GRADEBOOK_CELL_STATUSES = ['NOT_DUE', 'MISSING', 'SUBMITTED', 'RETURNED', 'GRADED'] as const;

/** A column of the gradebook: a published task of the class. */
export class GradebookTaskResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty()
  title: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'The class-wide deadline' })
  dueAt: string | null;

  @ApiProperty({ type: Number, nullable: true, description: "The rubric's maximum; null without a rubric" })
  maxPoints: number | null;
}

/** One member's standing on one task. */
export class GradebookCellResponse {
  @ApiProperty({ format: 'uuid' })
  taskId: string;

  @ApiProperty({
    enum: GRADEBOOK_CELL_STATUSES,
    enumName: 'GradebookCellStatus',
    description:
      "NOT_DUE: nothing submitted, the member's own deadline not passed (or none). MISSING: nothing submitted, " +
      'that deadline passed. RETURNED: the submission is returned for revision, scored or not. GRADED: a score ' +
      'is set. SUBMITTED: otherwise (feedback alone included)',
  })
  status: (typeof GRADEBOOK_CELL_STATUSES)[number];

  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'null when empty (and, in gradebook/me, unreleased)',
  })
  score: number | null;

  @ApiProperty({ description: "First submitted after the member's own deadline; false when empty" })
  isLate: boolean;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  releasedAt: string | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: "The submission's current version; null when empty",
  })
  version: number | null;
}

/** A student of the gradebook: as the submission list shows them, with a cell per task. */
export class GradebookRowResponse extends PickType(SubmissionListEntryResponse, [
  'userId',
  'nickname',
  'avatarHash',
  'studentId',
] as const) {
  @ApiProperty({ type: [GradebookCellResponse], description: 'One per task, in the order of `tasks`' })
  cells: GradebookCellResponse[];

  @ApiProperty({ type: 'integer', description: 'Cells with a score' })
  graded: number;

  @ApiProperty({ description: 'Sum of the scores set; 0 when none' })
  totalScore: number;
}

export class GradebookResponse {
  @ApiProperty({
    type: [GradebookTaskResponse],
    description:
      'Published tasks by dueAt (none last), then creation; drafts, scheduled and deleted ones are not columns',
  })
  tasks: GradebookTaskResponse[];

  @ApiProperty({ type: [GradebookRowResponse], description: 'The MEMBERs by display name' })
  rows: GradebookRowResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Cursor of the next page; null on the last' })
  nextCursor: string | null;
}

export class OwnGradebookResponse {
  @ApiProperty({ type: [GradebookTaskResponse] })
  tasks: GradebookTaskResponse[];

  @ApiProperty({
    type: GradebookRowResponse,
    description:
      "The caller's own row, released grades only: an unreleased grade shows as SUBMITTED, score null, not counted",
  })
  row: GradebookRowResponse;
}
