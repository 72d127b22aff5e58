import { avatarHash } from '../common/utils/avatar';
import { iso } from '../common/utils/time';
import { toAttachmentResponse } from '../files/attachment.response';
import { StoredAttachment } from '../files/stored-attachment.entity';
import {
  SubmissionListEntryResponse,
  SubmissionResponse,
  SubmissionSummaryResponse,
} from './dto/submission.response';
import { SubmissionAttachment } from './entities/submission-attachment.entity';
import { RosterRow, SubmissionRow, SubmissionSummaryRow, VersionRow } from './submissions.repository';
import { SubmissionVersionResponse } from './dto/submission-history.dto';

/** numeric(12,2) arrives as a string ("12.50"); JSON carries it as a number (12.5). */
export function scoreNumber(score: string | null): number | null {
  return score === null ? null : Number(score);
}

export function toSummaryResponse(submission: SubmissionSummaryRow): SubmissionSummaryResponse {
  return {
    id: submission.id,
    taskId: submission.taskId,
    userId: submission.userId,
    firstSubmittedAt: iso(submission.firstSubmittedAt) as string,
    lastUpdatedAt: iso(submission.lastUpdatedAt) as string,
    score: scoreNumber(submission.score),
    feedback: submission.feedback,
    reviewerId: submission.reviewerId,
    reviewedAt: iso(submission.reviewedAt),
    isExemplary: submission.isExemplary,
    isLate: submission.isLate,
    releasedAt: iso(submission.releasedAt),
    rubricAssessment:
      submission.rubricAssessment?.map(({ criterionId, levelId, points, comment }) => ({
        criterionId,
        levelId,
        points,
        comment,
      })) ?? null,
    version: submission.version,
    status: submission.status,
  };
}

export function toSubmissionResponse(
  submission: SubmissionRow,
  attachments: StoredAttachment[],
): SubmissionResponse {
  const { id, taskId, userId, ...rest } = toSummaryResponse(submission);
  return {
    id,
    taskId,
    userId,
    content: submission.content,
    attachments: attachments.map(toAttachmentResponse),
    ...rest,
  };
}

export function toListEntryResponse(
  row: RosterRow,
  attachments: SubmissionAttachment[],
): SubmissionListEntryResponse {
  const { memberId, nickname, email, schoolName, studentId, role, ...submission } = row;
  const submitted = submission.id !== null;
  return {
    userId: memberId,
    nickname,
    avatarHash: avatarHash(email),
    schoolName,
    studentId,
    role,
    submitted,
    attachments: submitted ? attachments.map(toAttachmentResponse) : [],
    submission: submitted ? toSummaryResponse(submission) : null,
  };
}

export function toVersionResponse(
  row: VersionRow,
  attachments: StoredAttachment[],
): SubmissionVersionResponse {
  return {
    version: row.version,
    content: row.content,
    attachments: attachments.map(toAttachmentResponse),
    submittedAt: iso(row.submittedAt)!,
    isLate: row.isLate,
  };
}
