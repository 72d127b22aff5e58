import { Column, CreateDateColumn, PrimaryGeneratedColumn } from 'typeorm';

/**
 * The columns `task_attachments` and `submission_attachments` share (TaskAttachment and
 * SubmissionAttachment have the same fields); each entity adds the key of what it is attached to.
 */
export abstract class StoredAttachment {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'varchar', length: 64 })
  fileKey: string;

  @Column({ type: 'varchar', length: 255 })
  originalName: string;

  @Column({ type: 'varchar', length: 255, nullable: true })
  mimeType: string | null;

  /** bigint comes back from pg as a string; the response mapper converts it. */
  @Column({ type: 'bigint', nullable: true })
  sizeBytes: string | null;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
