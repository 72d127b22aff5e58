import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Request } from 'express';
import { AppError } from '../common/errors/app-error';
import { IS_PUBLIC } from '../common/decorators/public.decorator';
import { TICKET_AUTH, TicketRequest } from '../common/decorators/ticket-auth.decorator';
import { StreamTickets } from '../notifications/stream/stream-tickets';

/**
 * Global authentication: every route needs a valid bearer token unless marked `@Public()`; a route marked
 * `@TicketAuth()` takes a live inbox `?ticket=` instead when no Authorization header is sent.
 */
@Injectable()
export class JwtAuthGuard extends AuthGuard('jwt') {
  constructor(
    private readonly reflector: Reflector,
    private readonly tickets: StreamTickets,
  ) {
    super();
  }

  override canActivate(context: ExecutionContext) {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;
    const request = context.switchToHttp().getRequest<Request>();
    const { ticket } = request.query;
    if (
      this.reflector.getAllAndOverride<boolean>(TICKET_AUTH, targets) &&
      request.headers.authorization === undefined &&
      typeof ticket === 'string'
    ) {
      return this.redeem(request, ticket);
    }
    return super.canActivate(context);
  }

  private async redeem(request: TicketRequest, ticket: string): Promise<boolean> {
    const user = await this.tickets.redeem(ticket);
    if (!user) throw AppError.unauthorized('Unknown, expired or revoked ticket');
    request.user = user;
    request.ticket = ticket;
    return true;
  }

  /**
   * `error` is a failure to check the token (reading its user), not a bad token: thrown as it is, so that the
   * exception filter answers it by its cause (503 for a database that cannot serve, see `failureCause`).
   */
  override handleRequest<TUser>(error: Error | null, user: TUser | false): TUser {
    if (error) throw error;
    if (!user) throw AppError.unauthorized();
    return user;
  }
}
