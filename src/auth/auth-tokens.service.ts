import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Tx } from '../database/transactions';
import { AppError, ErrorCode } from '../common/errors/app-error';
import { AuthTokensRepository, GrantRow } from './auth-tokens.repository';
import { TokenPurpose } from './entities/auth-token.entity';

/** What a valid token stands for. */
export interface TokenGrant {
  email: string;
  userId: string | null;
}

const toGrant = (row: GrantRow): TokenGrant => ({ email: row.email, userId: row.user_id });

const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

export const invalidToken = (): AppError =>
  new AppError(ErrorCode.INVALID_TOKEN, 'The link is invalid, already used or expired');

/**
 * E-mailed single-use tokens: 32 random bytes (base64url) given out once, stored only as a SHA-256 hash,
 * valid for 1 hour. Validity is always decided by the database clock.
 */
@Injectable()
export class AuthTokensService {
  constructor(private readonly tokens: AuthTokensRepository) {}

  /** Stores a new token in the caller's transaction and returns its only clear copy. */
  async issue(manager: Tx, purpose: TokenPurpose, email: string, userId: string | null): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.tokens.insert(manager, purpose, hashToken(token), email, userId);
    return token;
  }

  /** The grant of a usable token without using it, or null. */
  async peek(token: string, purpose: TokenPurpose): Promise<TokenGrant | null> {
    const row = await this.tokens.findUsable(hashToken(token), purpose);
    return row && toGrant(row);
  }

  /**
   * Uses the token in the caller's transaction, or throws 400 INVALID_TOKEN. The conditional UPDATE is the
   * arbiter: of two concurrent redemptions the second waits on the row lock, then matches nothing. A rolled
   * back transaction leaves the token usable. With `userId` the token must have been issued to that user.
   */
  async consume(manager: Tx, token: string, purpose: TokenPurpose, userId?: string): Promise<TokenGrant> {
    const row = await this.tokens.use(manager, hashToken(token), purpose, userId ?? null);
    if (!row) throw invalidToken();
    return toGrant(row);
  }

  /** Retires the other open tokens of one purpose once one of them has done its job. */
  async retireOthers(
    manager: Tx,
    purpose: TokenPurpose,
    where: { email: string } | { userId: string },
  ): Promise<void> {
    await this.tokens.retireOpen(manager, purpose, where);
  }
}
