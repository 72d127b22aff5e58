import { DataSource } from 'typeorm';
import { useTestDataSource } from '../../test/utils/test-data-source';
import { AuthTokensRepository } from './auth-tokens.repository';
import { TokenPurpose } from './entities/auth-token.entity';

describe('AuthTokensRepository (real PostgreSQL)', () => {
  let db: DataSource;
  let tokens: AuthTokensRepository;

  useTestDataSource((created) => {
    db = created;
    tokens = new AuthTokensRepository(db);
  });

  it('uses a token once, and only by the user it was issued to', async () => {
    const [{ id: userId }] = await db.query<{ id: string }[]>(
      `INSERT INTO users (email, password_hash) VALUES ('lin@example.test', 'x') RETURNING id`,
    );
    await tokens.insert(db, TokenPurpose.EMAIL_CHANGE, 'hash-a', 'new@example.test', userId);
    expect(await tokens.findUsable('hash-a', TokenPurpose.EMAIL_CHANGE)).toEqual({
      email: 'new@example.test',
      user_id: userId,
    });
    expect(await tokens.findUsable('hash-a', TokenPurpose.PASSWORD_RESET)).toBeNull();
    const stranger = '00000000-0000-4000-8000-000000000000';
    expect(await tokens.use(db, 'hash-a', TokenPurpose.EMAIL_CHANGE, stranger)).toBeNull();
    expect(await tokens.use(db, 'hash-a', TokenPurpose.EMAIL_CHANGE, userId)).toMatchObject({
      user_id: userId,
    });
    expect(await tokens.use(db, 'hash-a', TokenPurpose.EMAIL_CHANGE, userId)).toBeNull();
    expect((await tokens.issuedToUser(db, userId, TokenPurpose.EMAIL_CHANGE)).sent).toBe(1);
  });

  it('retires the open tokens of an address', async () => {
    await tokens.insert(db, TokenPurpose.PASSWORD_RESET, 'hash-b', 'mo@example.test', null);
    await tokens.retireOpen(db, TokenPurpose.PASSWORD_RESET, { email: 'mo@example.test' });
    expect(await tokens.findUsable('hash-b', TokenPurpose.PASSWORD_RESET)).toBeNull();
  });

  it('counts the sends to an address within 24 hours and deletes those past the window', async () => {
    expect(await tokens.sendsToAddress(db, 'q@example.test')).toEqual({ sent: 0, retry_after: null });
    await tokens.recordSend(db, 'q@example.test', TokenPurpose.REGISTRATION);
    await db.query(
      `INSERT INTO email_sends (address, purpose, created_at) VALUES ('q@example.test', 'REGISTRATION', now() - interval '25 hours')`,
    );
    const window = await tokens.sendsToAddress(db, 'q@example.test');
    expect(window.sent).toBe(1);
    expect(window.retry_after).toBeGreaterThan(86_000);
    expect(await tokens.deleteExpired()).toBe(1);
  });
});
