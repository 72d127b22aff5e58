import { ChannelFakes, startChannelFakes } from '../fakes/channels';
import { SmtpCapture } from '../fakes/smtp-server';
import { TelegramServer } from '../fakes/telegram-server';
import { WebhookReceiver } from '../fakes/webhook-receiver';
import { createTestDatabase, dropTestDatabase, withDatabase } from './database';
import { beforeAllTests, createTestApp, lateBound, TestApp, TestAppOptions } from './test-app';
import { TestUser } from './users';

export { waitFor } from './wait';

/** Environment of a test app whose scheduled and delivery jobs stay idle (no run within a test's time). */
export const IDLE_JOBS: Record<string, string> = {
  DELIVERY_POLL_INTERVAL_MS: '3600000',
  SCHEDULER_CRON: '0 0 0 1 1 *',
};

/** Environment of a test app whose notification jobs run fast. */
export const FAST_NOTIFICATIONS: Record<string, string> = {
  SCHEDULER_CRON: '*/1 * * * * *',
  DELIVERY_POLL_INTERVAL_MS: '100',
  DELIVERY_RETRY_BASE_SECONDS: '0',
};

export interface NotificationRow {
  id: string;
  user_id: string;
  type: string;
  task_id: string;
  status: string;
  title: string;
  content: string;
  hours_before: number | null;
  due_at: Date | null;
}

/** Every notification row of a task, whatever its status. */
export function notificationsOfTask(ctx: TestApp, taskId: string): Promise<NotificationRow[]> {
  return ctx.db.query(`SELECT * FROM notifications WHERE task_id = $1 ORDER BY created_at, id`, [taskId]);
}

export interface DeliveryRow {
  id: string;
  notification_id: string | null;
  channel: string;
  address: string;
  status: string;
  attempts: number;
  last_error: string | null;
}

/** A Delivery of the delivery log, as the API answers it. */
export interface DeliveryJson {
  id: string;
  notificationId: string | null;
  type: string;
  channel: string;
  address: string;
  status: string;
  attempts: number;
  lastError: string | null;
  nextAttemptAt: string | null;
  sentAt: string | null;
  createdAt: string;
}

/** Every delivery of the notifications of `user`, oldest first. */
export function deliveriesOf(ctx: TestApp, user: { id: string }): Promise<DeliveryRow[]> {
  return ctx.db.query(
    `SELECT d.* FROM notification_deliveries d JOIN notifications n ON n.id = d.notification_id
      WHERE n.user_id = $1 ORDER BY d.created_at, d.channel`,
    [user.id],
  );
}

/** The user's inbox (GET /users/me/notifications), asserting 200. */
export async function inbox(
  ctx: TestApp,
  user: TestUser,
  query: Record<string, string | number | boolean> = {},
) {
  const res = await ctx.http.get('/users/me/notifications').query(query).set('Authorization', user.auth);
  if (res.status !== 200) throw new Error(`inbox answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as {
    items: {
      id: string;
      type: string;
      taskId: string;
      title: string;
      content: string;
      readAt: string | null;
    }[];
    nextCursor: string | null;
    unreadCount: number;
  };
}

/** PUT /users/me/notification-prefs, asserting 200; answers the preference. */
export async function setPref(
  ctx: TestApp,
  user: TestUser,
  body: { channel: string; address: string; isEnabled?: boolean },
): Promise<{ id: string; channel: string; address: string; isEnabled: boolean; secret?: string }> {
  const res = await ctx.http.put('/users/me/notification-prefs').set('Authorization', user.auth).send(body);
  if (res.status !== 200)
    throw new Error(`PUT notification-prefs answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A migrated database of its own for several app instances (`createTestApp(env, {databaseUrl})`). */
export async function createSharedDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = process.env.TEST_ADMIN_DATABASE_URL!;
  const name = await createTestDatabase(adminUrl, process.env.TEST_TEMPLATE_DATABASE!);
  return { url: withDatabase(adminUrl, name), drop: () => dropTestDatabase(adminUrl, name) };
}

/**
 * Instances of the app (one per `envs` entry) on one database of their own, for the tests of the enclosing
 * describe: booted before them, closed and dropped after them.
 */
export function useSharedInstances(...envs: Record<string, string>[]): TestApp[] {
  let database: { url: string; drop(): Promise<void> } | undefined;
  const instances: TestApp[] = [];
  beforeAll(async () => {
    database = await createSharedDatabase();
    instances.push(
      ...(await Promise.all(envs.map((env) => createTestApp(env, { databaseUrl: database!.url })))),
    );
  });
  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.close()));
    await database?.drop();
  });
  return envs.map((_, index) => lateBound(`Instance ${index + 1}`, () => instances[index]));
}

export interface AppWithChannelFakes {
  ctx: TestApp;
  smtp: SmtpCapture;
  telegram: TelegramServer;
  receiver: WebhookReceiver;
}

/**
 * For the tests of the enclosing describe: the SMTP, Telegram and webhook fakes and an app with fast
 * notification jobs that sends to them; `env(fakes)` adds to or overrides its environment.
 */
export function useAppWithChannelFakes(
  env: (fakes: ChannelFakes) => Record<string, string>,
  options: TestAppOptions = {},
): AppWithChannelFakes {
  const current = beforeAllTests(async () => {
    const fakes = await startChannelFakes();
    const ctx = await createTestApp(
      {
        ...FAST_NOTIFICATIONS,
        SMTP_URL: fakes.smtp.url,
        TELEGRAM_API_URL: fakes.telegram.url,
        ...env(fakes),
      },
      options,
    );
    return {
      ctx,
      fakes,
      close: async () => {
        await ctx.close();
        await fakes.close();
      },
    };
  });
  return {
    ctx: lateBound('The test app', () => current()?.ctx),
    smtp: lateBound('The SMTP capture', () => current()?.fakes.smtp),
    telegram: lateBound('The Telegram fake', () => current()?.fakes.telegram),
    receiver: lateBound('The webhook receiver', () => current()?.fakes.receiver),
  };
}
