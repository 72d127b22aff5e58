import { ClassRole } from '../access/class-roles';

/**
 * When a submitter sees their grade: as soon as it is given, or once an OWNER or ADMIN releases
 * it. A setting of the task, named here because the submissions carry out the rule.
 */
export enum GradeRelease {
  IMMEDIATE = 'IMMEDIATE',
  MANUAL = 'MANUAL',
}

/** The grade fields of a submission (its rubric assessment too), and when they were released. */
interface GradeFields {
  score: string | null;
  feedback: string | null;
  reviewerId: string | null;
  reviewedAt: Date | null;
  isExemplary: boolean;
  releasedAt: Date | null;
  rubricAssessment: readonly unknown[] | null;
}

/**
 * The submission as its submitter of class role `role` sees it: a MEMBER sees no grade (score, feedback,
 * reviewer, exemplary mark, rubric assessment) before it is released;
 * OWNER and ADMIN always see it. A grade changed after its release shows as it is now.
 */
export function gradeVisibleToSubmitter<T extends GradeFields>(submission: T, role: ClassRole): T {
  if (role !== ClassRole.MEMBER || submission.releasedAt !== null) return submission;
  return {
    ...submission,
    score: null,
    feedback: null,
    reviewerId: null,
    reviewedAt: null,
    isExemplary: false,
    rubricAssessment: null,
  };
}
