import { RunningJobs } from '../common/jobs/running-jobs';
import { MetricsModule } from '../common/metrics/metrics.module';
import { Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { PassportModule } from '@nestjs/passport';
import { ThrottlerModule } from '@nestjs/throttler';
import { getDataSourceToken } from '@nestjs/typeorm';
import { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { NotificationsModule } from '../notifications/notifications.module';
import { SettingsModule } from '../settings/settings.module';
import { UsersModule } from '../users/users.module';
import { UsersRepositoryModule } from '../users/users.repository';
import { AccountMailService } from './account-mail.service';
import { AccountController } from './account.controller';
import { AccountsCleanupService } from './accounts-cleanup.service';
import { AuthController } from './auth.controller';
import { AuthTokensRepository } from './auth-tokens.repository';
import { AuthTokensService } from './auth-tokens.service';
import { AuthUserCacheModule } from './auth-user.cache';
import { CaptchaService } from './captcha.service';
import { CredentialsService } from './credentials.service';
import { EmailChangeService } from './email-change.service';
import { EmailQuotaService } from './email-quota.service';
import { JWT_ALGORITHM, JwtStrategy } from './jwt.strategy';
import { PasswordHasher } from './password-hasher';
import { RegistrationService } from './registration.service';
import { SessionService } from './session.service';
import { AccountThrottlerGuard, throttlerOptions } from '../common/throttling/throttles';
import { TransactionsModule } from '../database/transactions';
import { IdempotencyModule } from '../idempotency/idempotency.module';

@Module({
  imports: [
    IdempotencyModule,
    MetricsModule,
    TransactionsModule,
    PassportModule,
    JwtModule.registerAsync({
      global: true,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        secret: config.jwt.secret,
        signOptions: { algorithm: JWT_ALGORITHM, expiresIn: config.jwt.expiresInSeconds },
        verifyOptions: { algorithms: [JWT_ALGORITHM] },
      }),
    }),
    // Applied per route (AccountThrottlerGuard), never globally; counters live in PostgreSQL.
    ThrottlerModule.forRootAsync({
      inject: [getDataSourceToken(), APP_CONFIG],
      useFactory: throttlerOptions,
    }),
    UsersModule,
    UsersRepositoryModule,
    SettingsModule,
    // Account mails are queued on the notification outbox, in the transaction that stores their token.
    NotificationsModule,
    AuthUserCacheModule,
  ],
  controllers: [AuthController, AccountController],
  providers: [
    JwtStrategy,
    PasswordHasher,
    AuthTokensRepository,
    AuthTokensService,
    EmailQuotaService,
    AccountMailService,
    CaptchaService,
    SessionService,
    RegistrationService,
    CredentialsService,
    EmailChangeService,
    AccountThrottlerGuard,
    AccountsCleanupService,
    RunningJobs,
  ],
})
export class AuthModule {}
