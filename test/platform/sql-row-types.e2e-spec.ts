import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import ts from 'typescript';
import { createTestDatabase, dropTestDatabase, withDatabase } from '../utils/database';
import {
  checkRowTypes,
  describeStatement,
  PARSED,
  parsedAs,
  repositoryPath,
  RowTypeReport,
  sourceProgram,
  SRC,
} from '../utils/sql-row-types';

/**
 * The row types of the raw statements of src/ fit what PostgreSQL says the statements answer (see
 * test/utils/sql-row-types.ts): the same column names, and each property's type holds the value pg parses
 * from its column. Nullability is not checked (PostgreSQL does not describe it).
 *
 * A statement whose text cannot be found statically is listed in UNRESOLVED_FILE, so a new one fails here;
 * `UPDATE_SQL_ROW_TYPES=1` rewrites the list (a change to review like any other).
 */
const UNRESOLVED_FILE = join(__dirname, 'sql-row-types.unresolved.json');

/** A file of calls held in memory: the checker must find each kind of mistake in it. */
const PROBE = join(SRC, 'row-types-probe.ts');
const PROBE_TEXT = `
import { DataSource } from 'typeorm';
import { isoSql } from './common/utils/time';
import { one, Prepared, rows } from './database/sql';

declare const db: DataSource;

interface SchoolRow { id: string; name: string; created_at: string }
const SCHOOLS = new Prepared('probe.schools', \`SELECT id, name, \${isoSql('created_at')} AS created_at FROM schools\`);

export const fitting = () => rows<SchoolRow>(db, SCHOOLS);
export const misnamed = () => one<{ id: string; title: string }>(db, \`SELECT id, name FROM schools\`);
export const mistyped = () => one<{ id: string; created_at: string }>(db, \`SELECT id, created_at FROM schools\`);
export const inferred = (): Promise<{ id: number }[]> => rows(db, 'SELECT id FROM schools');
export const variants = (counted: boolean) => one<{ label: string }>(db, \`SELECT \${counted ? 'count(*)::int' : 'name'} AS label FROM schools\`);
export const refused = () => rows<{ id: string }>(db, 'SELECT id FROM no_such_table');
export const unresolvable = (where: string) => rows<{ id: string }>(db, \`SELECT id FROM schools WHERE \${where}\`);
export const untyped = () => rows(db, 'DELETE FROM schools');
`;

describe('row types of raw statements', () => {
  const adminUrl = process.env.TEST_ADMIN_DATABASE_URL!;
  let database: string;
  let client: Client;
  let program: ts.Program;

  beforeAll(async () => {
    program = sourceProgram({ [PROBE]: PROBE_TEXT });
    database = await createTestDatabase(adminUrl, process.env.TEST_TEMPLATE_DATABASE!);
    client = new Client({ connectionString: withDatabase(adminUrl, database) });
    await client.connect();
  }, 120_000);

  afterAll(async () => {
    await client?.end();
    if (database) await dropTestDatabase(adminUrl, database);
  });

  const sourceFiles = () =>
    program.getSourceFiles().filter((file) => file.fileName.startsWith(`${SRC}/`) && file.fileName !== PROBE);

  it('of every statement in src/ fit the columns PostgreSQL describes', async () => {
    const report = await checkRowTypes(program, sourceFiles(), client);
    console.info(
      `Row types: ${report.checked} call sites checked (${report.statements} statement texts), ` +
        `${Object.keys(report.unresolved).length} unresolved, ${report.untyped} calls without a row type`,
    );
    if (process.env.UPDATE_SQL_ROW_TYPES)
      writeFileSync(UNRESOLVED_FILE, `${JSON.stringify(report.unresolved, null, 2)}\n`);
    expect(report.problems).toEqual([]);
    const listed = JSON.parse(readFileSync(UNRESOLVED_FILE, 'utf8')) as RowTypeReport['unresolved'];
    expect(report.unresolved).toEqual(listed);
    expect(report.checked).toBeGreaterThan(50);
  }, 120_000);

  it('find a wrong name, a wrong type, a refused statement and an unresolvable one', async () => {
    const probe = program.getSourceFile(PROBE)!;
    const report = await checkRowTypes(program, [probe], client);
    const at = (name: string) => {
      const line = PROBE_TEXT.split('\n').findIndex((text) => text.startsWith(`export const ${name} `)) + 1;
      return `${repositoryPath(PROBE)}:${line} ${repositoryPath(PROBE)} ${name}`;
    };
    expect(report.problems).toEqual([
      `${at('misnamed')}: the column name (character varying) is no property of the row type`,
      `${at('misnamed')}: the property title is no column of the statement`,
      `${at('mistyped')}: created_at is string in the row type, but timestamp with time zone in PostgreSQL, which pg reads as Date`,
      `${at('inferred')}: id is number in the row type, but uuid in PostgreSQL, which pg reads as string`,
      `${at('variants')}: label is string in the row type, but integer in PostgreSQL, which pg reads as number`,
      `${at('refused')}: PostgreSQL refuses the statement: relation "no_such_table" does not exist`,
    ]);
    expect(report.unresolved).toEqual({ [`${repositoryPath(PROBE)} unresolvable`]: '`where`, a parameter' });
    expect(report).toMatchObject({ checked: 6, untyped: 1 });
  }, 60_000);

  it('describes a statement without running it', async () => {
    const count = async () => (await client.query('SELECT count(*)::int AS n FROM schools')).rows;
    const before = await count();
    await expect(
      describeStatement(client, `INSERT INTO schools (name) VALUES ($1) RETURNING id, created_at`),
    ).resolves.toEqual([
      { name: 'id', typeId: 2950 },
      { name: 'created_at', typeId: 1184 },
    ]);
    await expect(describeStatement(client, `DELETE FROM schools`)).resolves.toEqual([]);
    expect(await count()).toEqual(before);
  });

  it('know how pg parses column types: by default, src/ registers no type parser', () => {
    const registering = sourceFiles()
      .filter((file) => /\bsetTypeParser\b|\btypes\s*:\s*\{\s*getTypeParser/.test(file.text))
      .map((file) => repositoryPath(file.fileName));
    expect(registering).toEqual([]);
    for (const typeId of Object.keys(PARSED)) expect(() => parsedAs(Number(typeId))).not.toThrow();
  });
});
