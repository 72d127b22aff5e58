import { QueryFailedError } from 'typeorm';
import { DataSource } from 'typeorm';
import { createTestDataSource, TestDataSource } from '../../../test/utils/test-data-source';
import { AppError, ErrorCode } from './app-error';
import { constraintError, withConstraintErrors } from './constraint-errors';

describe('constraint errors (real PostgreSQL)', () => {
  let source: TestDataSource;
  let db: DataSource;

  beforeAll(async () => {
    source = await createTestDataSource();
    db = source.db;
  });

  afterAll(async () => {
    await source.close();
  });

  const addUser = (email: string): Promise<unknown> =>
    db.query(`INSERT INTO users (email, password_hash) VALUES ($1, 'x')`, [email]);

  it('answers a listed unique violation with its error, naming the values given', async () => {
    await addUser('taken@example.test');
    const duplicate = withConstraintErrors(() => addUser('taken@example.test'));
    await expect(duplicate).rejects.toBeInstanceOf(AppError);
    await expect(duplicate).rejects.toMatchObject({
      status: 409,
      code: ErrorCode.CONFLICT,
      message: 'This e-mail address is already registered',
    });
    const addSchool = (): Promise<unknown> =>
      withConstraintErrors(() => db.query(`INSERT INTO schools (name) VALUES ('Springfield')`), {
        name: 'Springfield',
      });
    await addSchool();
    await expect(addSchool()).rejects.toMatchObject({
      status: 409,
      message: 'A school named "Springfield" already exists',
    });
  });

  it('leaves violations of unlisted constraints and other errors as they are', async () => {
    await db.query(`INSERT INTO settings (key, value) VALUES ('k', '1')`);
    const unlisted = withConstraintErrors(() =>
      db.query(`INSERT INTO settings (key, value) VALUES ('k', '2')`),
    );
    await expect(unlisted).rejects.toBeInstanceOf(QueryFailedError);
    await expect(withConstraintErrors(() => db.query(`SELECT nope`))).rejects.toBeInstanceOf(
      QueryFailedError,
    );
    // A constraint name on an error outside SQLSTATE class 23 is no violation.
    expect(constraintError({ code: '40001', constraint: 'uq_users_email' })).toBeNull();
    expect(constraintError(new Error('plain'))).toBeNull();
  });

  it('answers the exemplary-needs-score check as a validation error', () => {
    const error = constraintError({ code: '23514', constraint: 'ck_submissions_exemplary_needs_score' });
    expect(error).toMatchObject({ status: 400, code: ErrorCode.VALIDATION_ERROR });
  });
});
