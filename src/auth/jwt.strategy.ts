import { createHash, createSecretKey } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { Strategy } from 'passport-jwt';
import { type AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';
import { AuthUser } from '../common/decorators/current-user.decorator';
import { isUuid } from '../common/utils/uuid';
import { UsersRepository } from '../users/users.repository';
import { AuthUserCache, TokenUser } from './auth-user.cache';

export const JWT_ALGORITHM = 'HS256';

/** Claims of a login token: `ver` is the user's token version at issue time. */
export interface JwtPayload {
  sub: string;
  ver: number;
  exp?: number;
}

/** How a login token is recognised without being stored: SHA-256 hex of the whole token. */
export const loginTokenHash = (token: string): string =>
  createHash('sha256').update(token, 'utf8').digest('hex');

/**
 * The whole Authorization header must be `Bearer <token>` (scheme in any case, RFC 7235). passport-jwt's own
 * extractor takes the second word of any header, so `Bearer <token> anything` passed.
 */
const BEARER = /^bearer +([A-Za-z0-9_.-]+)$/i;

export function bearerToken(request: Request): string | null {
  return BEARER.exec(request.headers.authorization ?? '')?.[1] ?? null;
}

/**
 * A token of the user's current version, or the one token the last password change kept. The token is hashed
 * only for a kept token's version, rarely met.
 */
function accepts({ tokenVersion, keptToken }: TokenUser, payload: JwtPayload, request: Request): boolean {
  if (payload.ver === tokenVersion) return true;
  return keptToken?.version === payload.ver && keptToken.hash === loginTokenHash(bearerToken(request)!);
}

@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(
    @InjectConfig() config: AppConfig,
    private readonly users: UsersRepository,
    private readonly cache: AuthUserCache,
  ) {
    super({
      jwtFromRequest: bearerToken,
      // A KeyObject, which jsonwebtoken takes as is (its and passport-jwt's types say only string | Buffer).
      // Given a string it first tries to parse it as a PEM public key and throws, on every request: about
      // 0.8 ms of CPU per verification instead of 0.02 ms.
      secretOrKey: createSecretKey(Buffer.from(config.jwt.secret)) as unknown as Buffer,
      algorithms: [JWT_ALGORITHM],
      ignoreExpiration: false,
      passReqToCallback: true,
    });
  }

  /**
   * Rejects tokens of deleted or deactivated users and tokens older than the last password change, except the
   * token that made that change. A cached user that accepts the token answers without a query; otherwise the
   * user is read again, as the token may be newer than the cached row (changed on another instance,
   * notification not yet here).
   */
  async validate(request: Request, payload: JwtPayload): Promise<AuthUser | false> {
    // Every token the service issues expires; jsonwebtoken checks `exp` only where there is one.
    if (!isUuid(payload.sub) || typeof payload.ver !== 'number' || typeof payload.exp !== 'number')
      return false;
    const cached = this.cache.get(payload.sub);
    if (cached && accepts(cached, payload, request)) return cached.user;
    const current = await this.cache.load(payload.sub, () => this.readTokenUser(payload.sub));
    return current && accepts(current, payload, request) ? current.user : false;
  }

  private async readTokenUser(userId: string): Promise<TokenUser | undefined> {
    const row = await this.users.tokenUser(userId);
    if (!row) return undefined;
    const { token_version: tokenVersion, kept_token_hash: hash, kept_token_version: version, ...user } = row;
    return { tokenVersion, keptToken: hash === null ? null : { hash, version: version! }, user };
  }
}
