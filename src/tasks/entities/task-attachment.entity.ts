import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity('task_attachments')
export class TaskAttachment {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  taskId: string;

  @Column({ type: 'varchar' })
  fileKey: string;

  @Column({ type: 'varchar' })
  originalName: string;

  @Column({ type: 'varchar', nullable: true })
  mimeType: string | null;

  /** bigint comes back from pg as a string; the mapper converts it. */
  @Column({ type: 'bigint', nullable: true })
  sizeBytes: string | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;
}
