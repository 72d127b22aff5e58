import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Request } from 'express';

export const TICKET_AUTH = 'ticketAuth';

/**
 * Marks a route that takes a `?ticket=` instead of the bearer header, for clients that cannot send headers
 * (browsers' EventSource). The bearer header works there too.
 */
export const TicketAuth = (): MethodDecorator => SetMetadata(TICKET_AUTH, true);

/** A request the authentication guard let in on its `?ticket=`. */
export interface TicketRequest extends Request {
  ticket?: string;
}

/** The ticket a `@TicketAuth()` request was let in on; undefined when it came with a bearer token. */
export const AuthTicket = createParamDecorator(
  (_data: unknown, context: ExecutionContext): string | undefined =>
    context.switchToHttp().getRequest<TicketRequest>().ticket,
);
