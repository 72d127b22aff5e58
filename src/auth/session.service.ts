import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { User } from '../users/entities/user.entity';
import { KeptToken } from '../users/users.repository';
import { toUserDto } from '../users/users.mapper';
import { AuthResponseDto } from './dto/responses.dto';
import { JwtPayload, loginTokenHash } from './jwt.strategy';

/**
 * Issues login tokens: HS256, 7 days, carrying the user's current token version and a random `jti`, so that
 * no two logins share a token and a password change can keep exactly the caller's one.
 */
@Injectable()
export class SessionService {
  constructor(private readonly jwt: JwtService) {}

  /** `user` must be freshly read (its token version decides which tokens stay valid). */
  async start(user: User): Promise<AuthResponseDto> {
    const payload: JwtPayload = { sub: user.id, ver: user.tokenVersion };
    const token = await this.jwt.signAsync(payload, { jwtid: randomBytes(16).toString('base64url') });
    return { token, user: toUserDto(user) };
  }

  /** The login token `token` (already verified by the guard) as a password change keeps it valid. */
  keep(token: string): KeptToken {
    return { hash: loginTokenHash(token), version: this.jwt.decode<JwtPayload>(token).ver };
  }
}
