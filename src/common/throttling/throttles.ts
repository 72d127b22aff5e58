import { applyDecorators, ExecutionContext, Injectable, UseGuards } from '@nestjs/common';
import {
  SkipThrottle,
  Throttle,
  ThrottlerGuard,
  ThrottlerLimitDetail,
  ThrottlerModuleOptions,
} from '@nestjs/throttler';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/config';
import { AppError } from '../errors/app-error';
import { normalizeEmail } from '../validation/email';
import { PgThrottlerStorage } from './pg-throttler.storage';

/**
 * Limits per one-minute window, each route counted on its own:
 * - login: 10 attempts per client IP and e-mail address, and `LOGIN_LIMIT_PER_IP` per client IP;
 * - the other public account routes: `ACCOUNT_ROUTE_LIMIT_PER_IP` per client IP (the e-mail quota limits what
 *   each address gets); both per-IP limits are configuration, sized for a class behind one school address;
 * - checks of the current password of a logged-in account: 10 per account, from any IP.
 * - comments: `COMMENTS_PER_USER_PER_MINUTE` per account.
 * Task parsing, notification test events and redeliveries are limited per account and hour instead.
 */
export const THROTTLE_WINDOW_MS = 60_000;
export const LOGIN_LIMIT_PER_IP_AND_EMAIL = 10;
export const PASSWORD_CHECK_LIMIT_PER_USER = 10;
export const PARSES_PER_USER_PER_HOUR = 60;
export const TEST_EVENTS_PER_USER_PER_HOUR = 10;
export const REDELIVERIES_PER_USER_PER_HOUR = 100;
export const COMMENTS_PER_USER_PER_MINUTE = 30;
/** OpenAPI text of the parse routes' 429. */
export const PARSE_LIMITED = `RATE_LIMITED: more than ${PARSES_PER_USER_PER_HOUR} parses of this route in an hour`;

const LOGIN_PER_IP = 'ip';
const PER_IP_AND_EMAIL = 'ipEmail';
const ACCOUNT_ROUTE_PER_IP = 'accountIp';
const PER_USER = 'user';
const THROTTLERS = [LOGIN_PER_IP, PER_IP_AND_EMAIL, ACCOUNT_ROUTE_PER_IP, PER_USER];

/** Every throttler applies to every guarded route unless skipped: a route names the ones it uses. */
const onlyThrottlers = (...used: string[]): MethodDecorator & ClassDecorator =>
  SkipThrottle(
    Object.fromEntries(THROTTLERS.filter((name) => !used.includes(name)).map((name) => [name, true])),
  );

interface TrackedRequest {
  ip?: string;
  body?: { email?: unknown };
  /** Set by the global JWT guard, which runs before route guards. */
  user?: { id: string };
}

const clientIp = (request: TrackedRequest): string => request.ip ?? 'unknown';

export function throttlerOptions(dataSource: DataSource, config: AppConfig): ThrottlerModuleOptions {
  const { loginPerIp, routePerIp } = config.accountLimits;
  return {
    // Only Retry-After is sent (with the 429); the library's per-throttler headers carry name suffixes.
    setHeaders: false,
    storage: new PgThrottlerStorage(dataSource),
    throttlers: [
      { name: LOGIN_PER_IP, ttl: THROTTLE_WINDOW_MS, limit: loginPerIp, getTracker: clientIp },
      {
        name: PER_IP_AND_EMAIL,
        ttl: THROTTLE_WINDOW_MS,
        limit: LOGIN_LIMIT_PER_IP_AND_EMAIL,
        getTracker: (request: TrackedRequest) => {
          const email = request.body?.email;
          return `${clientIp(request)}|${typeof email === 'string' ? normalizeEmail(email) : ''}`;
        },
      },
      { name: ACCOUNT_ROUTE_PER_IP, ttl: THROTTLE_WINDOW_MS, limit: routePerIp, getTracker: clientIp },
      {
        name: PER_USER,
        ttl: THROTTLE_WINDOW_MS,
        limit: PASSWORD_CHECK_LIMIT_PER_USER,
        getTracker: (request: TrackedRequest) => `user|${request.user?.id ?? clientIp(request)}`,
      },
    ],
  };
}

/** The throttler guard answering like every other limit: 429 RATE_LIMITED with Retry-After. */
@Injectable()
export class AccountThrottlerGuard extends ThrottlerGuard {
  protected override async throwThrottlingException(
    _context: ExecutionContext,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    throw AppError.rateLimited(detail.timeToBlockExpire);
  }
}

/** Login: per client IP and e-mail, and per client IP. */
export const LoginThrottle = (): MethodDecorator & ClassDecorator =>
  applyDecorators(UseGuards(AccountThrottlerGuard), onlyThrottlers(LOGIN_PER_IP, PER_IP_AND_EMAIL));

/** Other public account routes: per client IP only. */
export const AccountRouteThrottle = (): MethodDecorator & ClassDecorator =>
  applyDecorators(UseGuards(AccountThrottlerGuard), onlyThrottlers(ACCOUNT_ROUTE_PER_IP));

/**
 * A route of logged-in accounts limited per account (each route its own count), whatever the client IP. The
 * limits of `src/` are named decorators below; a module mounted as an extension builds its own with this.
 */
export const PerUserThrottle = (limit: number, ttl: number): MethodDecorator & ClassDecorator =>
  applyDecorators(
    UseGuards(AccountThrottlerGuard),
    onlyThrottlers(PER_USER),
    Throttle({ [PER_USER]: { limit, ttl } }),
  );

/**
 * Routes of a logged-in account that check its current password: per account, whatever the IP. Without it a
 * stolen login token guessed the password (which outlives the token) at bcrypt speed, past the login limits.
 */
export const PasswordCheckThrottle = (): MethodDecorator & ClassDecorator =>
  PerUserThrottle(PASSWORD_CHECK_LIMIT_PER_USER, THROTTLE_WINDOW_MS);

/**
 * Task parsing: each call may be a paid model request of up to 20,000 characters (AI_PROVIDER=openai) or
 * seconds of the local parser's shared worker queue, so one account cannot run it without bound.
 */
export const ParseThrottle = (): MethodDecorator & ClassDecorator =>
  PerUserThrottle(PARSES_PER_USER_PER_HOUR, 60 * THROTTLE_WINDOW_MS);

/**
 * Test events of a notification preference: each one is a message to an address the account chose (an
 * e-mail address nobody verified), so they cannot be a way to send mail at will.
 */
export const TestEventThrottle = (): MethodDecorator & ClassDecorator =>
  PerUserThrottle(TEST_EVENTS_PER_USER_PER_HOUR, 60 * THROTTLE_WINDOW_MS);

/** Redeliveries: generous for an integrator catching up after an outage, but not an unbounded mail sender. */
export const RedeliveryThrottle = (): MethodDecorator & ClassDecorator =>
  PerUserThrottle(REDELIVERIES_PER_USER_PER_HOUR, 60 * THROTTLE_WINDOW_MS);

/**
 * Comments: each one notifies the class's OWNER and ADMINs (inbox, e-mail, webhook, messenger), so one
 * account cannot flood them; a conversation at human speed stays far below it.
 */
export const CommentThrottle = (): MethodDecorator & ClassDecorator =>
  PerUserThrottle(COMMENTS_PER_USER_PER_MINUTE, THROTTLE_WINDOW_MS);
