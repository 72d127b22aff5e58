import { Injectable } from '@nestjs/common';
import { AppError, ErrorCode } from '../common/errors/app-error';
import { KeptToken, UsersRepository } from '../users/users.repository';
import { UsersService } from '../users/users.service';
import { AccountMailService } from './account-mail.service';
import { AuthTokensService, invalidToken } from './auth-tokens.service';
import { AuthUserCache } from './auth-user.cache';
import { AuthResponseDto, MessageDto, VerifyTokenResponseDto } from './dto/responses.dto';
import { EmailQuotaService } from './email-quota.service';
import { TokenPurpose } from './entities/auth-token.entity';
import { PasswordHasher } from './password-hasher';
import { SessionService } from './session.service';
import { Transactions, Tx } from '../database/transactions';

const invalidCredentials = (message = 'E-mail or password is incorrect'): AppError =>
  new AppError(ErrorCode.INVALID_CREDENTIALS, message);

const deactivated = (): AppError =>
  new AppError(ErrorCode.ACCOUNT_DEACTIVATED, 'This account is deactivated');

/** Login, password reset and change, token checks. */
@Injectable()
export class CredentialsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly users: UsersService,
    private readonly quota: EmailQuotaService,
    private readonly tokens: AuthTokensService,
    private readonly mail: AccountMailService,
    private readonly hasher: PasswordHasher,
    private readonly sessions: SessionService,
    private readonly authUsers: AuthUserCache,
    private readonly userRows: UsersRepository,
  ) {}

  /**
   * Unknown e-mail and wrong password answer alike and take alike; deactivation is told only after the password.
   * A password changed or reset while the old one was being compared fails the login: the token would otherwise
   * carry the new token version, so the old password would outlive the change that was meant to end it.
   */
  async login(email: string, password: string): Promise<AuthResponseDto> {
    const credentials = await this.users.findCredentials({ email });
    const matches = await this.hasher.verify(password, credentials?.passwordHash ?? null);
    if (!credentials || !matches) throw invalidCredentials();
    const user = await this.users.findById(credentials.id);
    if (!user.isActive) throw deactivated();
    if (user.tokenVersion !== credentials.tokenVersion) throw invalidCredentials();
    return this.sessions.start(user);
  }

  async verifyToken(token: string, purpose: TokenPurpose): Promise<VerifyTokenResponseDto> {
    const grant = await this.tokens.peek(token, purpose);
    return grant ? { valid: true, email: grant.email } : { valid: false };
  }

  /**
   * Same answer whether or not the address belongs to an account, and the address's mail quota is used
   * either way, so neither the answer nor the limit tells which addresses are registered.
   */
  async forgotPassword(email: string): Promise<MessageDto> {
    await this.transactions.run(async (manager) => {
      await this.quota.reserve(manager, email, TokenPurpose.PASSWORD_RESET);
      const userId = await this.userRows.activeIdByEmail(manager, email);
      if (userId === null) return;
      const token = await this.tokens.issue(manager, TokenPurpose.PASSWORD_RESET, email, userId);
      await this.mail.send(manager, TokenPurpose.PASSWORD_RESET, email, token);
    });
    return { message: 'If an account uses this address, a password reset e-mail is on its way.' };
  }

  async resetPassword(token: string, password: string): Promise<AuthResponseDto> {
    if (!(await this.tokens.peek(token, TokenPurpose.PASSWORD_RESET))) throw invalidToken();
    const passwordHash = await this.hasher.hash(password);
    const user = await this.transactions.run(async (manager) => {
      const { userId } = await this.tokens.consume(manager, token, TokenPurpose.PASSWORD_RESET);
      if (!userId) throw invalidToken();
      await this.replacePassword(manager, userId, passwordHash);
      const updated = await this.users.findById(userId, manager);
      // Deactivated after the mail was sent: refuse, and roll the reset back.
      if (!updated.isActive) throw deactivated();
      return updated;
    });
    this.authUsers.evict(user.id);
    return this.sessions.start(user);
  }

  /**
   * Every login token of the user stops working but `callerToken`, the one of this request: a client that
   * keeps it (ignoring the new token of the answer) stays logged in, every other session ends.
   */
  async changePassword(
    userId: string,
    callerToken: string,
    currentPassword: string,
    newPassword: string,
  ): Promise<AuthResponseDto> {
    const credentials = await this.users.findCredentials({ id: userId });
    if (!credentials || !(await this.hasher.verify(currentPassword, credentials.passwordHash))) {
      throw invalidCredentials('Current password is incorrect');
    }
    const passwordHash = await this.hasher.hash(newPassword);
    const user = await this.transactions.run(async (manager) => {
      // Of two concurrent changes (or a change and a reset) only the first wins: the current password the
      // other one checked is no longer the current one.
      const kept = this.sessions.keep(callerToken);
      if (!(await this.replacePassword(manager, userId, passwordHash, credentials.passwordHash, kept))) {
        throw invalidCredentials('Current password is incorrect');
      }
      return this.users.findById(userId, manager);
    });
    this.authUsers.evict(userId);
    return this.sessions.start(user);
  }

  /**
   * New hash; login tokens but `keptToken` and open reset links stop working. With `replacedHash` only while
   * that is still the stored hash; false when it is not.
   */
  private async replacePassword(
    manager: Tx,
    userId: string,
    passwordHash: string,
    replacedHash: string | null = null,
    keptToken: KeptToken | null = null,
  ): Promise<boolean> {
    if (!(await this.userRows.replacePassword(manager, userId, passwordHash, replacedHash, keptToken))) {
      return false;
    }
    await this.tokens.retireOthers(manager, TokenPurpose.PASSWORD_RESET, { userId });
    return true;
  }
}
