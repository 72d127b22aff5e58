import { QueryRunner } from 'typeorm';

/**
 * Rewrites the list of `notifications.type` from the one in force, so migrations of features that add their
 * own type (in either order) keep each other's. Kept out of `migrations/*.ts`, which TypeORM loads as
 * migrations.
 */
export async function setNotificationTypes(
  queryRunner: QueryRunner,
  change: (types: string[]) => string[],
): Promise<void> {
  const [{ definition }] = (await queryRunner.query(
    `SELECT pg_get_constraintdef(oid) AS definition FROM pg_constraint
      WHERE conrelid = 'notifications'::regclass AND conname = 'notifications_type_check'`,
  )) as { definition: string }[];
  const current = [...definition.matchAll(/'([A-Z_]+)'/g)].map((match) => match[1]);
  const types = [...new Set(change(current))].map((type) => `'${type}'`).join(', ');
  await queryRunner.query(`
    ALTER TABLE notifications DROP CONSTRAINT notifications_type_check;
    ALTER TABLE notifications ADD CONSTRAINT notifications_type_check CHECK (type IN (${types}));
  `);
}
