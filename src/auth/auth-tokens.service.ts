import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AppError, ErrorCode } from '../common/errors/app-error';
import { TokenPurpose } from './entities/auth-token.entity';

/** What a valid token stands for. */
export interface TokenGrant {
  email: string;
  userId: string | null;
}

interface GrantRow {
  email: string;
  user_id: string | null;
}

const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

export const invalidToken = (): AppError =>
  new AppError(ErrorCode.INVALID_TOKEN, 'The link is invalid, already used or expired');

/**
 * E-mailed single-use tokens: 32 random bytes (base64url) given out once, stored only as a SHA-256 hash,
 * valid for 1 hour. Validity is always decided by the database clock.
 */
@Injectable()
export class AuthTokensService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Stores a new token in the caller's transaction and returns its only clear copy. */
  async issue(
    manager: EntityManager,
    purpose: TokenPurpose,
    email: string,
    userId: string | null,
  ): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await manager.query(
      `INSERT INTO auth_tokens (purpose, token_hash, email, user_id, expires_at)
       VALUES ($1, $2, $3, $4, now() + interval '1 hour')`,
      [purpose, hashToken(token), email, userId],
    );
    return token;
  }

  /** The grant of a usable token without using it, or null. */
  async peek(token: string, purpose: TokenPurpose): Promise<TokenGrant | null> {
    const rows: GrantRow[] = await this.dataSource.query(
      `SELECT email, user_id FROM auth_tokens
       WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > now()`,
      [hashToken(token), purpose],
    );
    return rows[0] ? { email: rows[0].email, userId: rows[0].user_id } : null;
  }

  /**
   * Uses the token in the caller's transaction, or throws 400 INVALID_TOKEN. The conditional UPDATE is the
   * arbiter: of two concurrent redemptions the second waits on the row lock, then matches nothing. A rolled
   * back transaction leaves the token usable. With `userId` the token must have been issued to that user.
   */
  async consume(
    manager: EntityManager,
    token: string,
    purpose: TokenPurpose,
    userId?: string,
  ): Promise<TokenGrant> {
    const [rows]: [GrantRow[], number] = await manager.query(
      `UPDATE auth_tokens SET used_at = now()
       WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > now()
         AND ($3::uuid IS NULL OR user_id = $3::uuid)
       RETURNING email, user_id`,
      [hashToken(token), purpose, userId ?? null],
    );
    if (!rows[0]) throw invalidToken();
    return { email: rows[0].email, userId: rows[0].user_id };
  }

  /** Retires the other open tokens of one purpose once one of them has done its job. */
  async retireOthers(
    manager: EntityManager,
    purpose: TokenPurpose,
    where: { email: string } | { userId: string },
  ): Promise<void> {
    const [column, value] = 'email' in where ? ['email', where.email] : ['user_id', where.userId];
    await manager.query(
      `UPDATE auth_tokens SET used_at = now() WHERE purpose = $1 AND ${column} = $2 AND used_at IS NULL`,
      [purpose, value],
    );
  }
}
