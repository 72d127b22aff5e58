import { Injectable } from '@nestjs/common';
import { AuthUser } from '../common/decorators/current-user.decorator';
import { AppError } from '../common/errors/app-error';
import { UserDto } from '../users/dto/user.dto';
import { toUserDto } from '../users/users.mapper';
import { UsersRepository } from '../users/users.repository';
import { UsersService } from '../users/users.service';
import { AccountMailService } from './account-mail.service';
import { AuthTokensService } from './auth-tokens.service';
import { AuthUserCache } from './auth-user.cache';
import { CaptchaService } from './captcha.service';
import { MessageDto } from './dto/responses.dto';
import { EmailQuotaService } from './email-quota.service';
import { TokenPurpose } from './entities/auth-token.entity';
import { Transactions } from '../database/transactions';

/** Moving an account to a new address, proven by a token mailed to that address. */
@Injectable()
export class EmailChangeService {
  constructor(
    private readonly transactions: Transactions,
    private readonly captcha: CaptchaService,
    private readonly users: UsersService,
    private readonly quota: EmailQuotaService,
    private readonly tokens: AuthTokensService,
    private readonly mail: AccountMailService,
    private readonly authUsers: AuthUserCache,
    private readonly userRows: UsersRepository,
  ) {}

  async request(
    user: AuthUser,
    email: string,
    captchaToken: string | undefined,
    clientIp: string | undefined,
  ): Promise<MessageDto> {
    await this.captcha.verify(captchaToken, clientIp);
    if (email === user.email) throw AppError.validation('This is already the address of your account');
    if (await this.users.emailExists(email))
      throw AppError.conflict('This e-mail address is used by another account');
    await this.transactions.run(async (manager) => {
      await this.quota.reserveEmailChange(manager, user.id);
      await this.quota.reserve(manager, email, TokenPurpose.EMAIL_CHANGE);
      const token = await this.tokens.issue(manager, TokenPurpose.EMAIL_CHANGE, email, user.id);
      await this.mail.send(manager, TokenPurpose.EMAIL_CHANGE, email, token);
    });
    return {
      message: 'A confirmation e-mail is on its way to the new address. Open its link within 1 hour.',
    };
  }

  /**
   * Only a token issued to the caller works; an address taken meanwhile answers 409 and keeps the token. Open
   * reset links are retired too: they were mailed to an address the account no longer has.
   */
  async confirm(userId: string, token: string): Promise<UserDto> {
    const user = await this.transactions.run(async (manager) => {
      const { email } = await this.tokens.consume(manager, token, TokenPurpose.EMAIL_CHANGE, userId);
      await this.userRows.setEmail(manager, userId, email);
      await this.tokens.retireOthers(manager, TokenPurpose.EMAIL_CHANGE, { userId });
      await this.tokens.retireOthers(manager, TokenPurpose.PASSWORD_RESET, { userId });
      return this.users.findById(userId, manager);
    });
    this.authUsers.evict(userId);
    return toUserDto(user);
  }
}
