import { ApiProperty, OmitType } from '@nestjs/swagger';
import { ClassRole } from '../../classes/entities/class-member.entity';
import { AttachmentResponse } from '../../files/attachment.response';
import { SubmissionStatus } from '../entities/submission.entity';

/** The level chosen for one criterion of the task's rubric. */
export class RubricAssessmentEntryResponse {
  @ApiProperty({ format: 'uuid' })
  criterionId: string;

  @ApiProperty({ format: 'uuid' })
  levelId: string;

  @ApiProperty({ example: 4, description: "The level's points" })
  points: number;

  @ApiProperty({ type: String, nullable: true })
  comment: string | null;
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

  @ApiProperty({ type: [AttachmentResponse] })
  attachments: AttachmentResponse[];

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

  @ApiProperty({ description: 'false for the submitter (MEMBER) while the grade is unreleased' })
  isExemplary: boolean;

  @ApiProperty({
    description:
      "First submitted after the submitter's deadline (their extension's when later) as it stands now; " +
      'false without a deadline',
  })
  isLate: boolean;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      'When the grade became visible to the submitter; while null under MANUAL release, a MEMBER submitter ' +
      'sees score, feedback, reviewerId, reviewedAt and rubricAssessment null and isExemplary false',
  })
  releasedAt: string | null;

  @ApiProperty({
    type: [RubricAssessmentEntryResponse],
    nullable: true,
    description:
      "The rubric assessment, in the order of the rubric's criteria; null when none. Hidden from a MEMBER " +
      'submitter (null) until the grade is released, as score',
  })
  rubricAssessment: RubricAssessmentEntryResponse[] | null;

  @ApiProperty({
    type: 'integer',
    minimum: 1,
    description:
      "The current version's number: each write by the submitter makes a new version, except writes within " +
      "the amend window of the current version's start, which amend it; the first write after a return always " +
      'makes one',
  })
  version: number;

  @ApiProperty({
    enum: SubmissionStatus,
    enumName: 'SubmissionStatus',
    description:
      'RETURNED: handed back for revision; the submitter may write again even past the deadline, and that ' +
      'write makes it RESUBMITTED',
  })
  status: SubmissionStatus;
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

  @ApiProperty({ type: [AttachmentResponse], description: 'Empty when not submitted' })
  attachments: AttachmentResponse[];

  @ApiProperty({ type: SubmissionSummaryResponse, nullable: true, description: 'Null when not submitted' })
  submission: SubmissionSummaryResponse | null;
}
