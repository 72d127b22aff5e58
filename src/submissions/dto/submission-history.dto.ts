import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { PageSize } from '../../common/validation/page-size';
import { AttachmentResponse } from '../../files/attachment.response';
import { FEEDBACK_MAX_LENGTH } from './grade-submission.dto';

export const VERSIONS_PAGE_MAX = 100;
export const VERSIONS_PAGE_DEFAULT = 20;

/** Body of POST …/submissions/:submissionId/return. */
export class ReturnSubmissionDto {
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: FEEDBACK_MAX_LENGTH,
    description: "When given, becomes the submission's feedback (null clears it); absent, the feedback stays",
  })
  @IsOptional()
  @MaxLength(FEEDBACK_MAX_LENGTH)
  @IsString()
  feedback?: string | null;
}

/** Query of GET …/submissions/:submissionId/versions. */
export class ListVersionsQuery {
  @PageSize(VERSIONS_PAGE_MAX, VERSIONS_PAGE_DEFAULT)
  limit: number = VERSIONS_PAGE_DEFAULT;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page (opaque)' })
  @IsOptional()
  @Matches(/^[A-Za-z0-9_-]{1,100}$/, { message: 'cursor is malformed' })
  cursor?: string;
}

/** One version of a submission: what the submitter had submitted then. */
export class SubmissionVersionResponse {
  @ApiProperty({ type: 'integer', minimum: 1 })
  version: number;

  @ApiProperty({ type: String, nullable: true, description: 'Markdown body of this version' })
  content: string | null;

  @ApiProperty({
    type: [AttachmentResponse],
    description:
      'The attachments this version held; each file stays readable through its url while a version holds it',
  })
  attachments: AttachmentResponse[];

  @ApiProperty({ format: 'date-time', description: 'The last write of this version (an amendment moves it)' })
  submittedAt: string;

  @ApiProperty({ description: "submittedAt is later than the submitter's deadline as it stands now" })
  isLate: boolean;
}

export class SubmissionVersionsPage {
  @ApiProperty({ type: [SubmissionVersionResponse], description: 'Newest first' })
  versions: SubmissionVersionResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'Cursor of the next page; null on the last' })
  nextCursor: string | null;
}
