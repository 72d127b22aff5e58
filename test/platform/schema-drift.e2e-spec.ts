import { DataSource } from 'typeorm';
import { useTestDataSource } from '../utils/test-data-source';

/**
 * The entities describe rows (TypeORM's repositories write through them, raw statements take their shapes
 * as row types); the migrations own keys, constraints, indexes and triggers. So TypeORM's own comparison of
 * the entities with the migrated database must find no column to change; what it would do to constraints
 * and indexes, which the entities do not declare, is not drift.
 */
const CONSTRAINT_OR_INDEX = /^(ALTER TABLE "\w+" (DROP|ADD) CONSTRAINT |(DROP|CREATE)( UNIQUE)? INDEX )/;

/** Columns only the database reads and writes (kept by triggers or a key), which no entity maps. */
const DATABASE_ONLY_COLUMNS = [
  // Whether the submission is in its task's submitted count (migrations/1763800006000-TaskSubmissionCounts.ts).
  'ALTER TABLE "submissions" DROP COLUMN "counted"',
  // The constant 'OWNER' of the key that makes a class's owner one of its members (InitialSchema).
  'ALTER TABLE "classes" DROP COLUMN "owner_role"',
];

describe('entities and migrations', () => {
  let db: DataSource;
  useTestDataSource((source) => (db = source));

  it('TypeORM would change no column of the migrated database', async () => {
    const pending = await db.driver.createSchemaBuilder().log();
    const statements = pending.upQueries.map((query) => query.query);
    expect(statements.length).toBeGreaterThan(0);
    const columnChanges = statements.filter(
      (statement) => !CONSTRAINT_OR_INDEX.test(statement) && !DATABASE_ONLY_COLUMNS.includes(statement),
    );
    expect(columnChanges).toEqual([]);
    expect(statements).toEqual(expect.arrayContaining(DATABASE_ONLY_COLUMNS));
  });
});
