import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AuthUser } from '../../common/decorators/current-user.decorator';
import { type AppConfig } from '../../config/config';
import { InjectConfig } from '../../config/config.module';
import { Transactions } from '../../database/transactions';
import { StreamTicketDto } from '../dto/notification-stream.dto';
import { InboxStreamsRepository } from './inbox-streams.repository';

/** Tickets are 32 random bytes in base64url: 43 characters. */
const TICKET_FORMAT = /^[A-Za-z0-9_-]{43}$/;

/** What is stored of a ticket, and what its stream remembers of it. */
export const ticketHash = (ticket: string): Buffer => createHash('sha256').update(ticket).digest();

/**
 * Tickets that open a live inbox stream where no Authorization header can be sent (browsers' EventSource).
 * Only their hash is stored. A ticket opens one stream at a time and may open it again until it expires, as
 * a browser reconnects with the same URL (after a restart, or a network change); the stream it opened before
 * then ends. A ticket is bound to the user's token version: revoking the tokens revokes it too.
 */
@Injectable()
export class StreamTickets {
  private readonly ttlMs: number;

  constructor(
    @InjectConfig() config: AppConfig,
    private readonly streams: InboxStreamsRepository,
    private readonly transactions: Transactions,
  ) {
    this.ttlMs = config.notifications.streamTicketTtlSeconds * 1000;
  }

  async issue(userId: string): Promise<StreamTicketDto> {
    const ticket = randomBytes(32).toString('base64url');
    const expiresAt = await this.transactions.writeOne((db) =>
      this.streams.createTicket(db, userId, ticketHash(ticket), this.ttlMs),
    );
    return { ticket, expiresAt };
  }

  /** The ticket's user; null for an unknown, expired or revoked ticket. */
  redeem(ticket: string): Promise<AuthUser | null> {
    if (!TICKET_FORMAT.test(ticket)) return Promise.resolve(null);
    return this.streams.ticketUser(ticketHash(ticket));
  }
}
