import {
  defineNotificationType,
  notificationTypeNames,
  notificationTypes,
} from '../../src/notifications/production/notification-types';
import { useTestApp } from '../utils/test-app';

/**
 * The registry of notification types (`src/notifications/production/notification-types.ts`) is the one list:
 * the database's check constraint, the OpenAPI enums and the channel texts must say the same.
 */
describe('notification type registry', () => {
  const ctx = useTestApp();

  const sorted = (names: string[]): string[] => [...names].sort();

  it('lists the types every module defines, each once', () => {
    expect(sorted(notificationTypeNames())).toEqual(
      sorted([
        'TASK_PUBLISHED',
        'TASK_DUE_REMINDER',
        'TASK_EXTENDED',
        'TASK_COMMENT',
        'GRADE_RELEASED',
        'SUBMISSION_RETURNED',
      ]),
    );
  });

  it('agrees with the database check constraint of notifications.type', async () => {
    const [{ definition }] = await ctx.db.query(
      `SELECT pg_get_constraintdef(oid) AS definition FROM pg_constraint
        WHERE conrelid = 'notifications'::regclass AND conname = 'notifications_type_check'`,
    );
    const allowed = [...(definition as string).matchAll(/'([A-Z0-9_]+)'/g)].map((match) => match[1]);
    expect(sorted(allowed)).toEqual(sorted(notificationTypeNames()));
  });

  it('agrees with the OpenAPI enums of the inbox item and the delivery', async () => {
    const { components } = (await ctx.http.get('/openapi.json').expect(200)).body;
    expect(sorted(components.schemas.NotificationType.enum)).toEqual(sorted(notificationTypeNames()));
    expect(sorted(components.schemas.DeliveryType.enum)).toEqual(
      sorted([...notificationTypeNames(), 'TEST', 'DIGEST']),
    );
  });

  it('keeps the names of the deliveries of their own kind (TEST, DIGEST) from notification types', () => {
    for (const name of ['TEST', 'DIGEST']) {
      expect(() =>
        defineNotificationType({
          name,
          subject: 'class',
          texts: () => ({ title: `'t'`, content: `'c'` }),
        }),
      ).toThrow(`${name} names deliveries of their own kind`);
    }
    expect(notificationTypeNames()).not.toContain('DIGEST');
  });

  it('gives every type title and content SQL that runs with the aliases a fan-out provides', async () => {
    for (const type of notificationTypes()) {
      // Whatever the variables, NULL stands for them: this checks the texts' SQL, not their values.
      const vars = new Proxy({}, { get: () => 'NULL' });
      const { title, content } = type.texts(vars);
      // The aliases the fan-out provides, with one row each, so every text is evaluated once.
      const [row] = await ctx.db.query(
        `SELECT (${title})::text AS title, (${content})::text AS content
           FROM (SELECT 'UTC' AS timezone) u,
                (SELECT 'Class' AS name) c,
                (SELECT 'Task' AS title, now() AS due_at) t,
                (SELECT NULL::uuid AS user_id) m`,
      );
      expect([type.name, Object.keys(row)]).toEqual([type.name, ['title', 'content']]);
    }
  });
});
