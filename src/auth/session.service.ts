import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { User } from '../users/entities/user.entity';
import { toUserDto } from '../users/users.mapper';
import { AuthResponseDto } from './dto/responses.dto';
import { JwtPayload } from './jwt.strategy';

/** Issues login tokens: HS256, 7 days, carrying the user's current token version. */
@Injectable()
export class SessionService {
  constructor(private readonly jwt: JwtService) {}

  /** `user` must be freshly read (its token version decides which tokens stay valid). */
  async start(user: User): Promise<AuthResponseDto> {
    const payload: JwtPayload = { sub: user.id, ver: user.tokenVersion };
    return { token: await this.jwt.signAsync(payload), user: toUserDto(user) };
  }
}
