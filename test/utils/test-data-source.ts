import { DataSource } from 'typeorm';
import { AppConfig, loadConfig } from '../../src/config/config';
import { buildDataSourceOptions } from '../../src/database/typeorm-options';
import { createTestDatabase, dropTestDatabase, withDatabase } from './database';

export interface TestDataSource {
  db: DataSource;
  /** Its configuration's database part (the application's other parts need a JWT secret). */
  config: Pick<AppConfig, 'database'>;
  close(): Promise<void>;
}

/** A DataSource on a fresh database cloned from the migrated template, without the application. */
export async function createTestDataSource(env: Record<string, string> = {}): Promise<TestDataSource> {
  const adminUrl = process.env.TEST_ADMIN_DATABASE_URL!;
  const database = await createTestDatabase(adminUrl, process.env.TEST_TEMPLATE_DATABASE!);
  const config = loadConfig({ DATA_DIR: '/tmp/cts-test-data', ...env });
  const db = new DataSource(buildDataSourceOptions(config, withDatabase(adminUrl, database)));
  await db.initialize();
  return {
    db,
    config,
    async close() {
      await db.destroy();
      await dropTestDatabase(adminUrl, database);
    },
  };
}

/** A fresh test DataSource for the enclosing describe block, handed to `setup` before its tests and dropped after. */
export function useTestDataSource(setup: (db: DataSource) => void): void {
  let source: TestDataSource;
  beforeAll(async () => {
    source = await createTestDataSource();
    setup(source.db);
  });
  afterAll(() => source.close());
}

/** A user, and a class owned by that user, written with plain SQL. */
export async function seedClass(
  db: DataSource,
  email: string,
): Promise<{ ownerId: string; classId: string }> {
  const [{ id: ownerId }] = await db.query<{ id: string }[]>(
    `INSERT INTO users (email, password_hash) VALUES ($1, 'x') RETURNING id`,
    [email],
  );
  const classId = await db.transaction(async (manager) => {
    const [{ id }] = await manager.query<{ id: string }[]>(
      `INSERT INTO classes (name, owner_id, invite_code) VALUES ('Seeded', $1::uuid, upper(substr(md5($1::text), 1, 10)))
       RETURNING id`,
      [ownerId],
    );
    await manager.query(`INSERT INTO class_members (class_id, user_id, role) VALUES ($1, $2, 'OWNER')`, [
      id,
      ownerId,
    ]);
    return id;
  });
  return { ownerId, classId };
}
