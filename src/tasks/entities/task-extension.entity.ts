import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/**
 * One member's own deadline for a task (CONTRACT §5.1). It references the membership (`class_id`, `user_id`),
 * so it goes when the member leaves the class.
 */
@Entity('task_extensions')
export class TaskExtension {
  @PrimaryColumn({ type: 'uuid' })
  taskId: string;

  @PrimaryColumn({ type: 'uuid' })
  userId: string;

  /** The task's class, for the membership reference. */
  @Column({ type: 'uuid' })
  classId: string;

  @Column({ type: 'timestamptz' })
  dueAt: Date;

  /** Null: the task's own rule. */
  @Column({ type: 'boolean', nullable: true })
  allowLateSubmission: boolean | null;

  @Column({ type: 'uuid', nullable: true })
  createdBy: string | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
