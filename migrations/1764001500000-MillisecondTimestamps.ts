import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every `timestamptz` column of the service's tables, converted to `precision`. A trigger whose condition
 * names a column (`WHEN (OLD.read_at IS DISTINCT FROM NEW.read_at)`) forbids changing its type: such
 * triggers are dropped first and made again from their own definitions afterwards.
 */
const convertTimestamps = (precision: string): string => `
  DO $$
  DECLARE
    col record;
    trigger record;
    definitions text[] := '{}';
    definition text;
  BEGIN
    FOR trigger IN
      SELECT t.tgname, c.relname, pg_get_triggerdef(t.oid) AS definition
        FROM pg_trigger t
        JOIN pg_class c ON c.oid = t.tgrelid
       WHERE c.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal
         AND (t.tgqual IS NOT NULL OR cardinality(t.tgattr::int2[]) > 0)
    LOOP
      definitions := definitions || trigger.definition;
      EXECUTE format('DROP TRIGGER %I ON %I', trigger.tgname, trigger.relname);
    END LOOP;
    FOR col IN
      SELECT c.table_name, c.column_name
        FROM information_schema.columns c
        JOIN information_schema.tables t USING (table_schema, table_name)
       WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
         AND c.data_type = 'timestamp with time zone'
    LOOP
      EXECUTE format('ALTER TABLE %I ALTER COLUMN %I TYPE timestamptz${precision}', col.table_name, col.column_name);
    END LOOP;
    FOREACH definition IN ARRAY definitions LOOP
      EXECUTE definition;
    END LOOP;
  END $$;
`;

/**
 * Timestamps keep the milliseconds the API shows, no more (docs/decisions.md, "Timestamps in milliseconds"):
 * with microseconds kept, a submission shown at exactly its deadline compared as later than it. PostgreSQL
 * rounds a value to the column's precision when it stores it, so what is stored is what is shown.
 */
export class MillisecondTimestamps1764001500000 implements MigrationInterface {
  name = 'MillisecondTimestamps1764001500000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(convertTimestamps('(3)'));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(convertTimestamps(''));
  }
}
