import { ApiProperty, OmitType } from '@nestjs/swagger';
import { ClassRole } from '../../classes/entities/class-member.entity';

export class SubmissionAttachmentResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ description: 'Opaque storage key' })
  fileKey: string;

  @ApiProperty({ example: '作业.pdf' })
  originalName: string;

  @ApiProperty({ type: String, nullable: true })
  mimeType: string | null;

  @ApiProperty({ type: Number, nullable: true })
  sizeBytes: number | null;

  @ApiProperty({ example: '/files/3q2-...', description: 'GET /files/:fileKey, relative to the API base' })
  url: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;
}

export class SubmissionResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  taskId: string;

  @ApiProperty({ format: 'uuid' })
  userId: string;

  @ApiProperty({ type: String, nullable: true, description: 'Markdown body' })
  content: string | null;

  @ApiProperty({ type: [SubmissionAttachmentResponse] })
  attachments: SubmissionAttachmentResponse[];

  @ApiProperty({ format: 'date-time', description: 'Never changes after creation' })
  firstSubmittedAt: string;

  @ApiProperty({ format: 'date-time', description: 'Last change of content or attachments' })
  lastUpdatedAt: string;

  @ApiProperty({ type: Number, nullable: true, example: 92.5 })
  score: number | null;

  @ApiProperty({ type: String, nullable: true })
  feedback: string | null;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  reviewerId: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  reviewedAt: string | null;

  @ApiProperty()
  isExemplary: boolean;
}

/** The submission as the grader's list shows it: without body and attachments. */
export class SubmissionSummaryResponse extends OmitType(SubmissionResponse, [
  'content',
  'attachments',
] as const) {}

export class SubmissionListEntryResponse {
  @ApiProperty({ format: 'uuid' })
  userId: string;

  @ApiProperty({ type: String, nullable: true })
  nickname: string | null;

  @ApiProperty({ description: 'SHA-256 hex of the trimmed, lower-cased e-mail' })
  avatarHash: string;

  @ApiProperty({ type: String, nullable: true })
  schoolName: string | null;

  @ApiProperty({ type: String, nullable: true })
  studentId: string | null;

  @ApiProperty({ enum: ClassRole })
  role: ClassRole;

  @ApiProperty()
  submitted: boolean;

  @ApiProperty({ type: [SubmissionAttachmentResponse], description: 'Empty when not submitted' })
  attachments: SubmissionAttachmentResponse[];

  @ApiProperty({ type: SubmissionSummaryResponse, nullable: true, description: 'Null when not submitted' })
  submission: SubmissionSummaryResponse | null;
}
