import { createSecretKey } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { InjectDataSource } from '@nestjs/typeorm';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';
import { AuthUser } from '../common/decorators/current-user.decorator';
import { PreparedStatement } from '../database/prepared-statement';

export const JWT_ALGORITHM = 'HS256';

/** Claims of a login token: `ver` is the user's token version at issue time. */
export interface JwtPayload {
  sub: string;
  ver: number;
}

/** Every authenticated request runs this: one primary-key probe, so revocation takes effect at once. */
const TOKEN_USER = new PreparedStatement<AuthUser>(
  'auth.token_user',
  `SELECT id, email, timezone FROM users WHERE id = $1 AND is_active AND token_version = $2`,
);

@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(
    @InjectConfig() config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      // A KeyObject, which jsonwebtoken takes as is (its and passport-jwt's types say only string | Buffer).
      // Given a string it first tries to parse it as a PEM public key and throws, on every request: about
      // 0.8 ms of CPU per verification instead of 0.02 ms.
      secretOrKey: createSecretKey(Buffer.from(config.jwt.secret)) as unknown as Buffer,
      algorithms: [JWT_ALGORITHM],
      ignoreExpiration: false,
    });
  }

  /** Rejects tokens of deleted or deactivated users and tokens older than the last password change. */
  async validate(payload: JwtPayload): Promise<AuthUser | false> {
    if (typeof payload.sub !== 'string' || typeof payload.ver !== 'number') return false;
    const [user] = await TOKEN_USER.rows(this.dataSource, [payload.sub, payload.ver]);
    return user ?? false;
  }
}
