import { ApiProperty } from '@nestjs/swagger';
import { notificationTypeNames } from '../production/notification-types';

/** Inbox item. */
export class NotificationDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ enum: notificationTypeNames(), enumName: 'NotificationType' })
  type: string;

  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'The task the notification is about; null for one about the class or another of its things',
  })
  taskId: string | null;

  @ApiProperty({ format: 'uuid' })
  classId: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Task title when the notification was produced; null when taskId is',
  })
  taskTitle: string | null;

  @ApiProperty({ description: 'Class name when the notification was produced' })
  className: string;

  @ApiProperty({ description: 'Plain text' })
  title: string;

  @ApiProperty({ description: "Plain text; times are written in the recipient's time zone" })
  content: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'null: unread' })
  readAt: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;
}

export class NotificationPageDto {
  @ApiProperty({ type: [NotificationDto], description: 'Newest first' })
  items: NotificationDto[];

  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'Cursor of the next page; null on the last page',
  })
  nextCursor: string | null;

  @ApiProperty({ description: 'Unread notifications across all pages' })
  unreadCount: number;
}

export class UnreadCountDto {
  @ApiProperty()
  unreadCount: number;
}

export class NotificationIdDto {
  @ApiProperty({ format: 'uuid' })
  id: string;
}

export class ReadAllResultDto {
  @ApiProperty({ description: 'Notifications that were unread and are read now' })
  updated: number;
}
