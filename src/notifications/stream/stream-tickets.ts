import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AuthUser } from '../../common/decorators/current-user.decorator';
import { StreamTicketDto } from '../dto/notification-stream.dto';
import { InboxStreamsRepository } from './inbox-streams.repository';

const TICKET_TTL_MS = 60_000;
/** Tickets are 32 random bytes in base64url: 43 characters. */
const TICKET_FORMAT = /^[A-Za-z0-9_-]{43}$/;

const hashOf = (ticket: string): Buffer => createHash('sha256').update(ticket).digest();

/**
 * Single-use tickets that open a live inbox stream where no Authorization header can be sent (browsers'
 * EventSource). Only their hash is stored; using one deletes it, so the database decides which of concurrent
 * uses wins. A ticket is bound to the user's token version: revoking the tokens revokes it too.
 */
@Injectable()
export class StreamTickets {
  constructor(private readonly streams: InboxStreamsRepository) {}

  async issue(userId: string): Promise<StreamTicketDto> {
    const ticket = randomBytes(32).toString('base64url');
    const expiresAt = await this.streams.createTicket(userId, hashOf(ticket), TICKET_TTL_MS);
    return { ticket, expiresAt };
  }

  /** The ticket's user, once; null for an unknown, used, expired or revoked ticket. */
  redeem(ticket: string): Promise<AuthUser | null> {
    if (!TICKET_FORMAT.test(ticket)) return Promise.resolve(null);
    return this.streams.redeemTicket(hashOf(ticket));
  }
}
