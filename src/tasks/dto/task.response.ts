import { ApiProperty } from '@nestjs/swagger';
import { AttachmentResponse } from '../../files/attachment.response';
import { GradeRelease } from '../../submissions/grade-release';

/** The caller's personal state of a task. */
export class TaskUserStateResponse {
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'First view (POST /tasks/:taskId/view)',
  })
  viewedAt: string | null;

  @ApiProperty({ type: [String] })
  tags: string[];

  @ApiProperty({ type: Number, nullable: true })
  sortOrder: number | null;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: "The caller's firstSubmittedAt",
  })
  submittedAt: string | null;
}

export class TaskSummaryResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  classId: string;

  @ApiProperty()
  className: string;

  @ApiProperty({ description: 'Empty only on a draft' })
  title: string;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Visible to members from then',
  })
  startAt: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Deadline' })
  dueAt: string | null;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: "The caller's deadline: the later of dueAt and the caller's extension; null without dueAt",
  })
  myDueAt: string | null;

  @ApiProperty({ description: 'The caller has an extension of this task' })
  hasExtension: boolean;

  @ApiProperty()
  allowLateSubmission: boolean;

  @ApiProperty({ enum: GradeRelease, enumName: 'GradeRelease', description: 'When members see their grades' })
  gradeRelease: GradeRelease;

  @ApiProperty({ description: 'The task has a rubric (GET /tasks/{taskId}/rubric)' })
  hasRubric: boolean;

  @ApiProperty({
    type: Number,
    nullable: true,
    example: 20,
    description: "The rubric's maximum: the sum of each criterion's highest level; null without a rubric",
  })
  maxPoints: number | null;

  @ApiProperty({ type: [String], format: 'uuid', description: 'Tasks a member must submit first' })
  blockedBy: string[];

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  createdBy: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt: string;

  @ApiProperty({ description: 'Current class members who have submitted' })
  submittedCount: number;

  @ApiProperty({ description: 'Members of the class, every role' })
  memberCount: number;

  @ApiProperty({
    type: TaskUserStateResponse,
    nullable: true,
    description: 'Null while the caller has neither viewed, tagged, sorted nor submitted',
  })
  userState: TaskUserStateResponse | null;

  @ApiProperty()
  isPublished: boolean;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  publishedAt: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'Free text the task was parsed from' })
  sourceText: string | null;

  @ApiProperty({ description: 'MEMBER only: a task of blockedBy still lacks their submission' })
  isLocked: boolean;
}

export class MyTaskSummaryResponse extends TaskSummaryResponse {
  @ApiProperty({ example: '#6366f1' })
  classColor: string;
}

export class TaskStatsResponse {
  @ApiProperty()
  memberCount: number;

  @ApiProperty({ description: 'Current members who have viewed the task' })
  viewedCount: number;

  @ApiProperty()
  submittedCount: number;
}

export class TaskAttachmentResponse extends AttachmentResponse {}

export class TaskDetailResponse extends TaskSummaryResponse {
  @ApiProperty({ type: String, nullable: true, description: 'Markdown' })
  description: string | null;

  @ApiProperty({ type: [TaskAttachmentResponse] })
  attachments: TaskAttachmentResponse[];

  @ApiProperty({
    type: TaskStatsResponse,
    nullable: true,
    description: 'OWNER and ADMIN only; null for a MEMBER',
  })
  stats: TaskStatsResponse | null;
}

export class MyDraftResponse {
  @ApiProperty({
    type: TaskDetailResponse,
    nullable: true,
    description: "The caller's newest draft in the class",
  })
  draft: TaskDetailResponse | null;
}

export class DraftMarkdownResponse {
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Null when nothing is cached or the cache expired',
  })
  markdown: string | null;
}
