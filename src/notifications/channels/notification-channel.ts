import { NotificationChannelName } from '../entities/notification-pref.entity';
import { TEST_EVENT } from '../entities/notification-delivery.entity';

/** The event a notification delivery is about; the WEBHOOK body is built from it. */
export interface NotificationEvent {
  id: string;
  type: string;
  createdAt: Date;
  /** null unless the subject is a task; then `taskTitle`, `startAt` and `dueAt` are the task's. */
  taskId: string | null;
  taskTitle: string | null;
  classId: string;
  className: string;
  startAt: Date | null;
  dueAt: Date | null;
  /** What the type adds to the webhook `data` (e.g. TASK_EXTENDED: `myDueAt`); null when nothing. */
  data: Record<string, unknown> | null;
}

/** A TEST event (`POST /users/me/notification-prefs/:channel/test`): a WEBHOOK body with empty `data`. */
export interface TestEvent {
  id: string;
  type: typeof TEST_EVENT;
  createdAt: Date;
}

export type DeliveryEvent = NotificationEvent | TestEvent;

/** One claimed delivery, with everything a channel needs to send it. */
export interface DeliveryJob {
  id: string;
  /** The `webhook-id`: the delivery's id, or for a redelivery that of the delivery it repeats. */
  webhookId: string;
  channel: NotificationChannelName;
  address: string;
  /** 1 for the first attempt. */
  attempt: number;
  subject: string;
  text: string;
  html: string | null;
  /** null for account e-mails, which are not about an event. */
  event: DeliveryEvent | null;
  /** Signing secret of the recipient's WEBHOOK preference. */
  secret: string | null;
}

/** A failure that another attempt cannot fix (e.g. the channel is not configured): no retry. */
export class PermanentDeliveryError extends Error {}

/**
 * One delivery channel. `send` resolves when the message was accepted and throws otherwise; it must give up
 * by itself within a bounded time.
 */
export interface NotificationChannel {
  readonly name: NotificationChannelName;
  /** Deliveries of this channel sent at the same time by one instance. */
  readonly concurrency: number;
  send(job: DeliveryJob): Promise<void>;
}

export const NOTIFICATION_CHANNELS = Symbol('NOTIFICATION_CHANNELS');
