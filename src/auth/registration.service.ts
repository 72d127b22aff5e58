import { Injectable } from '@nestjs/common';
import { AppError, ErrorCode } from '../common/errors/app-error';
import { SettingsService } from '../settings/settings.service';
import { UsersService } from '../users/users.service';
import { AccountMailService } from './account-mail.service';
import { AuthTokensService, invalidToken } from './auth-tokens.service';
import { CaptchaService } from './captcha.service';
import { AuthResponseDto, MessageDto } from './dto/responses.dto';
import { CompleteRegistrationDto } from './dto/requests.dto';
import { EmailQuotaService } from './email-quota.service';
import { TokenPurpose } from './entities/auth-token.entity';
import { PasswordHasher } from './password-hasher';
import { SessionService } from './session.service';
import { Transactions } from '../database/transactions';

/** Two-step registration: an e-mailed verification token, then the account with its personal class. */
@Injectable()
export class RegistrationService {
  constructor(
    private readonly transactions: Transactions,
    private readonly settings: SettingsService,
    private readonly captcha: CaptchaService,
    private readonly users: UsersService,
    private readonly quota: EmailQuotaService,
    private readonly tokens: AuthTokensService,
    private readonly mail: AccountMailService,
    private readonly hasher: PasswordHasher,
    private readonly sessions: SessionService,
  ) {}

  async register(
    email: string,
    captchaToken: string | undefined,
    clientIp: string | undefined,
  ): Promise<MessageDto> {
    await this.requireOpen();
    await this.captcha.verify(captchaToken, clientIp);
    if (await this.users.emailExists(email))
      throw AppError.conflict('This e-mail address is already registered');
    await this.transactions.run(async (manager) => {
      await this.quota.reserve(manager, email, TokenPurpose.REGISTRATION);
      const token = await this.tokens.issue(manager, TokenPurpose.REGISTRATION, email, null);
      await this.mail.send(manager, TokenPurpose.REGISTRATION, email, token);
    });
    return {
      message: 'A verification e-mail is on its way. Open its link within 1 hour to finish registering.',
    };
  }

  /**
   * Uses the token and creates user, personal class and membership in one transaction: any failure (school,
   * student number, e-mail taken meanwhile) rolls everything back and leaves the token usable.
   */
  async complete(request: CompleteRegistrationDto): Promise<AuthResponseDto> {
    await this.requireOpen();
    // Cheap check first, so junk tokens never cost a bcrypt hash.
    if (!(await this.tokens.peek(request.token, TokenPurpose.REGISTRATION))) throw invalidToken();
    const passwordHash = await this.hasher.hash(request.password);
    const user = await this.transactions.run(async (manager) => {
      const { email } = await this.tokens.consume(manager, request.token, TokenPurpose.REGISTRATION);
      const created = await this.users.createWithPersonalClass(manager, {
        email,
        passwordHash,
        nickname: request.nickname,
        timezone: request.timezone,
        schoolId: request.schoolId,
        studentId: request.studentId,
      });
      await this.tokens.retireOthers(manager, TokenPurpose.REGISTRATION, { email });
      return created;
    });
    return this.sessions.start(user);
  }

  private async requireOpen(): Promise<void> {
    if (!(await this.settings.isRegistrationOpen())) {
      throw new AppError(ErrorCode.REGISTRATION_CLOSED, 'Registration is closed');
    }
  }
}
