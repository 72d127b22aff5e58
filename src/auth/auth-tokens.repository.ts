import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { deleteFinishedThrottlingWindows } from '../common/throttling/pg-throttler.storage';
import { affected, Db, one, rows } from '../database/sql';
import { TokenPurpose } from './entities/auth-token.entity';
import { Tx } from '../database/transactions';

export interface GrantRow {
  email: string;
  user_id: string | null;
}

/** Mails counted in the last 24 hours, and seconds until the oldest of them leaves the window. */
export interface QuotaWindow {
  sent: number;
  retry_after: number | null;
}

/**
 * Single-use tokens (stored as hashes) and the e-mail quotas counted over `email_sends` and the tokens
 * themselves; validity is always decided by the database clock.
 */
@Injectable()
export class AuthTokensRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** A token valid for 1 hour. */
  async insert(
    db: Db,
    purpose: TokenPurpose,
    tokenHash: string,
    email: string,
    userId: string | null,
  ): Promise<void> {
    await rows(
      db,
      `INSERT INTO auth_tokens (purpose, token_hash, email, user_id, expires_at)
       VALUES ($1, $2, $3, $4, now() + interval '1 hour')`,
      [purpose, tokenHash, email, userId],
    );
  }

  /** The grant of a usable token, without using it. */
  findUsable(tokenHash: string, purpose: TokenPurpose): Promise<GrantRow | null> {
    return one<GrantRow>(
      this.dataSource,
      `SELECT email, user_id FROM auth_tokens
       WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > now()`,
      [tokenHash, purpose],
    );
  }

  /**
   * Uses a usable token (with `userId`: only one issued to that user); null when there is none. Of two
   * concurrent redemptions the second waits on the row lock, then matches nothing.
   */
  use(db: Db, tokenHash: string, purpose: TokenPurpose, userId: string | null): Promise<GrantRow | null> {
    return one<GrantRow>(
      db,
      `UPDATE auth_tokens SET used_at = now()
       WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > now()
         AND ($3::uuid IS NULL OR user_id = $3::uuid)
       RETURNING email, user_id`,
      [tokenHash, purpose, userId],
    );
  }

  /** Marks the open tokens of one purpose and address (or user) used. */
  async retireOpen(
    db: Db,
    purpose: TokenPurpose,
    where: { email: string } | { userId: string },
  ): Promise<void> {
    const [column, value] = 'email' in where ? ['email', where.email] : ['user_id', where.userId];
    await rows(
      db,
      `UPDATE auth_tokens SET used_at = now() WHERE purpose = $1 AND ${column} = $2 AND used_at IS NULL`,
      [purpose, value],
    );
  }

  /** A transaction-scoped advisory lock on (`space`, hash of `key`). */
  async lock(db: Tx, space: number, key: string): Promise<void> {
    await rows(db, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, [space, key]);
  }

  /** Mails sent to `address` in the last 24 hours. */
  async sendsToAddress(db: Db, address: string): Promise<QuotaWindow> {
    const window = await one<QuotaWindow>(
      db,
      `SELECT count(*)::int AS sent,
              ceil(extract(epoch FROM min(created_at) + interval '24 hours' - now()))::int AS retry_after
       FROM email_sends WHERE address = $1 AND created_at > now() - interval '24 hours'`,
      [address],
    );
    return window!;
  }

  async recordSend(db: Db, address: string, purpose: TokenPurpose): Promise<void> {
    await rows(db, `INSERT INTO email_sends (address, purpose) VALUES ($1, $2)`, [address, purpose]);
  }

  /** Tokens of `purpose` issued to the user in the last 24 hours. */
  async issuedToUser(db: Db, userId: string, purpose: TokenPurpose): Promise<QuotaWindow> {
    const window = await one<QuotaWindow>(
      db,
      `SELECT count(*)::int AS sent,
              ceil(extract(epoch FROM min(created_at) + interval '24 hours' - now()))::int AS retry_after
       FROM auth_tokens
       WHERE user_id = $1 AND purpose = $2 AND created_at > now() - interval '24 hours'`,
      [userId, purpose],
    );
    return window!;
  }

  /** Tokens a day past expiry, e-mail sends past the quota window, finished throttling windows. */
  async deleteExpired(): Promise<number> {
    let deleted = await affected(
      this.dataSource,
      `DELETE FROM auth_tokens WHERE expires_at < now() - interval '1 day'`,
    );
    deleted += await affected(
      this.dataSource,
      `DELETE FROM email_sends WHERE created_at < now() - interval '24 hours'`,
    );
    deleted += await deleteFinishedThrottlingWindows(this.dataSource);
    return deleted;
  }
}
