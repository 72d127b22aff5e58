import type { DeliveryLogRow } from './delivery/deliveries.repository';
import { DeliveryDto } from './dto/delivery.dto';
import { NotificationPrefDto } from './dto/notification-pref.dto';
import { NotificationScheduleDto } from './dto/notification-schedule.dto';
import { NotificationDto } from './dto/notification.response';
import { NotificationChannelName, NotificationPref } from './entities/notification-pref.entity';
import { Notification } from './entities/notification.entity';
import type { ScheduleRow } from './schedule/notification-schedules.repository';

/** An inbox row; its timestamps are already the JSON strings (`isoSql`). */
export type InboxRow = Pick<
  Notification,
  'id' | 'type' | 'taskId' | 'classId' | 'taskTitle' | 'className' | 'title' | 'content'
> & { readAt: string | null; createdAt: string };

export function toNotificationDto(row: InboxRow): NotificationDto {
  return {
    id: row.id,
    type: row.type,
    taskId: row.taskId,
    classId: row.classId,
    taskTitle: row.taskTitle,
    className: row.className,
    title: row.title,
    content: row.content,
    readAt: row.readAt,
    createdAt: row.createdAt,
  };
}

export type PrefRow = Pick<NotificationPref, 'id' | 'channel' | 'address' | 'isEnabled' | 'secret'>;

/** The secret belongs to WEBHOOK preferences only; the other channels have none to show. */
export function toNotificationPrefDto(row: PrefRow): NotificationPrefDto {
  const pref: NotificationPrefDto = {
    id: row.id,
    channel: row.channel,
    address: row.address,
    isEnabled: row.isEnabled,
  };
  if (row.channel === NotificationChannelName.WEBHOOK) pref.secret = row.secret!;
  return pref;
}

export function toDeliveryDto(row: DeliveryLogRow): DeliveryDto {
  return {
    id: row.id,
    notificationId: row.notificationId,
    type: row.type,
    channel: row.channel,
    address: row.address,
    status: row.status,
    attempts: row.attempts,
    lastError: row.lastError,
    nextAttemptAt: row.nextAttemptAt,
    sentAt: row.sentAt,
    createdAt: row.createdAt,
  };
}

export function toNotificationScheduleDto(row: ScheduleRow): NotificationScheduleDto {
  return {
    quietHours:
      row.quietStart !== null && row.quietEnd !== null ? { start: row.quietStart, end: row.quietEnd } : null,
    digest: row.digest,
    digestAt: row.digestAt,
  };
}
