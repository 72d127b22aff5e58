import { SetMetadata } from '@nestjs/common';

export const TICKET_AUTH = 'ticketAuth';

/**
 * Marks a route that takes a single-use `?ticket=` instead of the bearer header, for clients that cannot
 * send headers (browsers' EventSource). The bearer header works there too.
 */
export const TicketAuth = (): MethodDecorator => SetMetadata(TICKET_AUTH, true);
