import { validateCronExpression } from 'cron';
import { bool, ConfigError, Env, int, MAX_TIMER_MS, optional, str, url } from './env';

/**
 * Notifications: channels, reminders and the delivery worker.
 * - `TELEGRAM_BOT_TOKEN` (unset: MESSENGER deliveries fail), `TELEGRAM_API_URL` (`https://api.telegram.org`).
 * - `WEBHOOK_ALLOW_PRIVATE` (`false`): webhooks to loopback and private addresses.
 * - `REMINDER_HOURS_BEFORE_DUE` (`24`), `SCHEDULER_CRON` (`0 * * * * *`).
 * - `DELIVERY_POLL_INTERVAL_MS` (`1000`), `DELIVERY_RETRY_BASE_SECONDS` (`30`), `DELIVERY_MAX_ATTEMPTS` (`6`),
 *   `DELIVERY_RETENTION_DAYS` (`30`).
 * - `NOTIFICATION_STREAM_HEARTBEAT_MS` (`25000`, at most 30000): how often a live inbox stream gets a `:`
 *   heartbeat; the same tick renews the instance's stream leases and ends streams whose tokens were revoked.
 * - `STREAM_TICKET_TTL_SECONDS` (`300`): how long a live inbox ticket may (re)open its stream.
 */
export interface NotificationsConfig {
  telegram: { botToken: string | null; apiUrl: string };
  webhook: { allowPrivate: boolean; timeoutMs: number };
  notifications: {
    reminderHoursBeforeDue: number[];
    schedulerCron: string;
    pollIntervalMs: number;
    retryBaseSeconds: number;
    maxAttempts: number;
    /** Days a sent, failed or skipped delivery is kept (a sent account e-mail goes at once). */
    retentionDays: number;
    /** Live inbox: heartbeat of the open streams. */
    streamHeartbeatMs: number;
    /** How long a live inbox stream ticket may open, and reopen, its stream. */
    streamTicketTtlSeconds: number;
  };
}

export function notificationsConfig(env: Env): NotificationsConfig {
  return {
    telegram: {
      botToken: optional(env, 'TELEGRAM_BOT_TOKEN'),
      apiUrl: url(env, 'TELEGRAM_API_URL', 'https://api.telegram.org', ['http:', 'https:']),
    },
    webhook: { allowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE', false), timeoutMs: 10000 },
    notifications: {
      reminderHoursBeforeDue: reminderHours(env),
      schedulerCron: cron(env),
      pollIntervalMs: int(env, 'DELIVERY_POLL_INTERVAL_MS', 1000, 10, MAX_TIMER_MS),
      retryBaseSeconds: int(env, 'DELIVERY_RETRY_BASE_SECONDS', 30, 0),
      maxAttempts: int(env, 'DELIVERY_MAX_ATTEMPTS', 6, 1, 100),
      retentionDays: int(env, 'DELIVERY_RETENTION_DAYS', 30, 1, 3650),
      // A stream gets a heartbeat at least every 30 s.
      streamHeartbeatMs: int(env, 'NOTIFICATION_STREAM_HEARTBEAT_MS', 25_000, 10, 30_000),
      streamTicketTtlSeconds: int(env, 'STREAM_TICKET_TTL_SECONDS', 300, 1, 86_400),
    },
  };
}

/** One year. */
const MAX_REMINDER_HOURS = 8760;

function reminderHours(env: Env): number[] {
  const raw = str(env, 'REMINDER_HOURS_BEFORE_DUE', '24');
  const parts = raw.split(',').map((part) => part.trim());
  const hours = parts.map(Number);
  // The bound keeps `dueAt − h` within PostgreSQL's timestamps; a reminder a year ahead is already unusual.
  if (
    parts.some((part) => part === '') ||
    hours.some((h) => !Number.isFinite(h) || h <= 0 || h > MAX_REMINDER_HOURS)
  ) {
    throw new ConfigError(
      'REMINDER_HOURS_BEFORE_DUE',
      `must be comma-separated hours above 0 and at most ${MAX_REMINDER_HOURS}, got "${raw}"`,
    );
  }
  return [...new Set(hours)].sort((a, b) => b - a);
}

function cron(env: Env): string {
  const value = str(env, 'SCHEDULER_CRON', '0 * * * * *').trim();
  if (value.split(/\s+/).length !== 6 || !validateCronExpression(value).valid) {
    throw new ConfigError('SCHEDULER_CRON', `must be a 6-field cron expression, got "${value}"`);
  }
  return value;
}
