import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** PENDING until the dispatcher has routed it to the recipient's channels; only SENT ones are in the inbox. */
export enum NotificationStatus {
  PENDING = 'PENDING',
  SENT = 'SENT',
}

/**
 * One recipient's copy of an event, with the task and class names and texts as they were when produced. The
 * types are registered in `production/notification-types.ts`.
 */
@Entity('notifications')
export class Notification {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  userId: string;

  @Column({ type: 'varchar', length: 30 })
  type: string;

  /** null when the subject is not a task (a class, or a row of another module). */
  @Column({ type: 'uuid', nullable: true })
  taskId: string | null;

  @Column({ type: 'uuid' })
  classId: string;

  @Column({ type: 'varchar', length: 200, nullable: true })
  taskTitle: string | null;

  @Column({ type: 'varchar', length: 100 })
  className: string;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  startAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  dueAt: Date | null;

  /** TASK_EXTENDED: the member's new deadline (dueAt stays the class-wide one); null for other types. */
  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  myDueAt: Date | null;

  /** The reminder offset (hours before dueAt); null for TASK_PUBLISHED. */
  @Column({ type: 'double precision', nullable: true })
  hoursBefore: number | null;

  /** The comment of a TASK_COMMENT; deleting the comment deletes the notification. */
  @Column({ type: 'uuid', nullable: true })
  commentId: string | null;

  /** The subject when it is a row of another module (e.g. an announcement); null otherwise. */
  @Column({ type: 'uuid', nullable: true })
  subjectId: string | null;

  /** What the type adds to the webhook `data` (e.g. TASK_EXTENDED: `myDueAt`); null when nothing. */
  @Column({ type: 'jsonb', nullable: true })
  data: Record<string, unknown> | null;

  @Column({ type: 'text' })
  title: string;

  @Column({ type: 'text' })
  content: string;

  @Column({ type: 'varchar', length: 10, default: NotificationStatus.PENDING })
  status: NotificationStatus;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  readAt: Date | null;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
