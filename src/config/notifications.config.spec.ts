import { itRejects } from '../../test/utils/config';
import { notificationsConfig } from './notifications.config';

describe('notificationsConfig', () => {
  it('sorts reminder hours latest-first without repeats', () => {
    expect(
      notificationsConfig({ REMINDER_HOURS_BEFORE_DUE: '1, 24,24,0.5' }).notifications.reminderHoursBeforeDue,
    ).toEqual([24, 1, 0.5]);
  });

  it('lets a live inbox ticket (re)open its stream for 300 s unless told otherwise', () => {
    expect(notificationsConfig({}).notifications.streamTicketTtlSeconds).toBe(300);
    expect(
      notificationsConfig({ STREAM_TICKET_TTL_SECONDS: '60' }).notifications.streamTicketTtlSeconds,
    ).toBe(60);
  });

  itRejects(notificationsConfig, [
    ['TELEGRAM_API_URL', { TELEGRAM_API_URL: 'telegram' }],
    ['WEBHOOK_ALLOW_PRIVATE', { WEBHOOK_ALLOW_PRIVATE: '2' }],
    ['REMINDER_HOURS_BEFORE_DUE', { REMINDER_HOURS_BEFORE_DUE: '24,,1' }],
    ['REMINDER_HOURS_BEFORE_DUE', { REMINDER_HOURS_BEFORE_DUE: '0' }],
    // Out of PostgreSQL's timestamp range once subtracted from a due time: every reminder run failed.
    ['REMINDER_HOURS_BEFORE_DUE', { REMINDER_HOURS_BEFORE_DUE: '24,100000000' }],
    ['SCHEDULER_CRON', { SCHEDULER_CRON: '* * * * *' }],
    // Six fields that the scheduler cannot read: the start failed with the cron library's message only.
    ['SCHEDULER_CRON', { SCHEDULER_CRON: '99 * * * * *' }],
    ['SCHEDULER_CRON', { SCHEDULER_CRON: 'a b c d e f' }],
    ['DELIVERY_POLL_INTERVAL_MS', { DELIVERY_POLL_INTERVAL_MS: '1.5' }],
    // Beyond a timer's 2^31 − 1 ms Node fires the interval every millisecond instead.
    ['DELIVERY_POLL_INTERVAL_MS', { DELIVERY_POLL_INTERVAL_MS: '3000000000' }],
    ['DELIVERY_RETRY_BASE_SECONDS', { DELIVERY_RETRY_BASE_SECONDS: 'soon' }],
    ['DELIVERY_MAX_ATTEMPTS', { DELIVERY_MAX_ATTEMPTS: '0' }],
    ['DELIVERY_RETENTION_DAYS', { DELIVERY_RETENTION_DAYS: '0' }],
    ['STREAM_TICKET_TTL_SECONDS', { STREAM_TICKET_TTL_SECONDS: '0' }],
  ]);
});
