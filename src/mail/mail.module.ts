import { MailerModule } from '@nestjs-modules/mailer';
import { Module } from '@nestjs/common';
import { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { MailSender } from './mail-sender';

/** Gives up on an SMTP server that accepted the connection but never finishes the transaction. */
const SMTP_SEND_TIMEOUT_MS = 30_000;

@Module({
  imports: [
    MailerModule.forRootAsync({
      // The mailer's typings read Nest's ModuleMetadata through a deep import (`@nestjs/common/interfaces`) that
      // Nest 12's package exports no longer serve, which leaves `imports` required; the config is global.
      imports: [],
      inject: [APP_CONFIG],
      // Without SMTP_URL nothing is sent (MailSender logs instead); the JSON transport only satisfies the module.
      useFactory: (config: AppConfig) => ({
        transport: config.mail.smtpUrl ?? { jsonTransport: true },
        sendTimeout: SMTP_SEND_TIMEOUT_MS,
      }),
    }),
  ],
  providers: [MailSender],
  exports: [MailSender],
})
export class MailModule {}
