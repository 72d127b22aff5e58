import { ApiProperty } from '@nestjs/swagger';
import { NotificationType } from '../entities/notification.entity';

/** Inbox item (the Notification resource). */
export class NotificationDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ enum: NotificationType, enumName: 'NotificationType' })
  type: NotificationType;

  @ApiProperty({ format: 'uuid' })
  taskId: string;

  @ApiProperty({ format: 'uuid' })
  classId: string;

  @ApiProperty({ description: 'Task title when the notification was produced' })
  taskTitle: string;

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
