import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** Where a submission stands in its revision cycle. */
export enum SubmissionStatus {
  SUBMITTED = 'SUBMITTED',
  /** Handed back for revision: the submitter may write again whatever the deadline, until their next write. */
  RETURNED = 'RETURNED',
  /** Written again after a return. */
  RESUBMITTED = 'RESUBMITTED',
}

@Entity('submissions')
export class Submission {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  taskId: string;

  @Column({ type: 'uuid' })
  userId: string;

  @Column({ type: 'text', nullable: true })
  content: string | null;

  @Column({ type: 'timestamptz', precision: 3, default: () => 'now()' })
  firstSubmittedAt: Date;

  @Column({ type: 'timestamptz', precision: 3, default: () => 'now()' })
  lastUpdatedAt: Date;

  /** numeric(12,2) comes back from pg as a string; the mapper converts it to a JSON number. */
  @Column({ type: 'numeric', precision: 12, scale: 2, nullable: true })
  score: string | null;

  @Column({ type: 'varchar', length: 10000, nullable: true })
  feedback: string | null;

  @Column({ type: 'uuid', nullable: true })
  reviewerId: string | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  reviewedAt: Date | null;

  @Column({ type: 'boolean', default: false })
  isExemplary: boolean;

  /** When the grade became visible to the submitter; null while unreleased. */
  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  releasedAt: Date | null;

  /** The current version's number (1, 2, …). */
  @Column({ type: 'integer', default: 1 })
  version: number;

  /** When the current version began: writes within the amend window of it amend the version. */
  @Column({ type: 'timestamptz', precision: 3, default: () => 'now()' })
  versionStartedAt: Date;

  @Column({ type: 'varchar', length: 12, default: SubmissionStatus.SUBMITTED })
  status: SubmissionStatus;
}
