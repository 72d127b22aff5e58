import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

export enum NotificationType {
  TASK_PUBLISHED = 'TASK_PUBLISHED',
  TASK_DUE_REMINDER = 'TASK_DUE_REMINDER',
  TASK_EXTENDED = 'TASK_EXTENDED',
  TASK_COMMENT = 'TASK_COMMENT',
  GRADE_RELEASED = 'GRADE_RELEASED',
}

/** PENDING until the dispatcher has routed it to the recipient's channels; only SENT ones are in the inbox. */
export enum NotificationStatus {
  PENDING = 'PENDING',
  SENT = 'SENT',
}

/** One recipient's copy of an event, with the task and class names and texts as they were when produced. */
@Entity('notifications')
export class Notification {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  userId: string;

  @Column({ type: 'varchar', length: 20 })
  type: NotificationType;

  @Column({ type: 'uuid' })
  taskId: string;

  @Column({ type: 'uuid' })
  classId: string;

  @Column({ type: 'varchar', length: 200 })
  taskTitle: string;

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
