import { Injectable } from '@nestjs/common';
import { Tx } from '../database/transactions';
import { AppError } from '../common/errors/app-error';
import { AuthTokensRepository } from './auth-tokens.repository';
import { TokenPurpose } from './entities/auth-token.entity';

export const EMAILS_PER_ADDRESS_PER_DAY = 5;
/** E-mail change mails one account may have sent in 24 hours, whatever the addresses. */
export const EMAIL_CHANGES_PER_USER_PER_DAY = 5;

/** First key of the two-key advisory locks taken per address (keeps them apart from other advisory locks). */
const EMAIL_QUOTA_LOCK_SPACE = 0x6d61696c;
/** First key of the advisory locks taken per account for its e-mail change mails. */
const EMAIL_CHANGE_LOCK_SPACE = 0x6d616975;

/**
 * "5 e-mails per address per 24 hours" over verification, reset and e-mail-change mails, counted in
 * `email_sends` so every instance sees the same count.
 */
@Injectable()
export class EmailQuotaService {
  constructor(private readonly tokens: AuthTokensRepository) {}

  /**
   * Records one mail to `address` in the caller's transaction, or throws 429 with Retry-After (seconds until
   * the oldest send of the window leaves it). The per-address advisory lock serializes count-then-insert
   * across instances until the transaction ends.
   */
  async reserve(manager: Tx, address: string, purpose: TokenPurpose): Promise<void> {
    await this.tokens.lock(manager, EMAIL_QUOTA_LOCK_SPACE, address);
    const window = await this.tokens.sendsToAddress(manager, address);
    if (window.sent >= EMAILS_PER_ADDRESS_PER_DAY) throw AppError.rateLimited(window.retry_after ?? 1);
    await this.tokens.recordSend(manager, address, purpose);
  }

  /**
   * The per-address count alone let one account mail any number of fresh addresses through the e-mail
   * change route. Counted over the account's EMAIL_CHANGE tokens (kept a day past their 1-hour life, so the
   * 24-hour window is complete) under a per-account advisory lock; the caller then issues the token in the
   * same transaction. Throws 429 with Retry-After as `reserve` does.
   */
  async reserveEmailChange(manager: Tx, userId: string): Promise<void> {
    await this.tokens.lock(manager, EMAIL_CHANGE_LOCK_SPACE, userId);
    const window = await this.tokens.issuedToUser(manager, userId, TokenPurpose.EMAIL_CHANGE);
    if (window.sent >= EMAIL_CHANGES_PER_USER_PER_DAY) throw AppError.rateLimited(window.retry_after ?? 1);
  }
}
