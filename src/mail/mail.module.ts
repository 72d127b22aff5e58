import { Module } from '@nestjs/common';
import { MailSender } from './mail-sender';

@Module({
  providers: [MailSender],
  exports: [MailSender],
})
export class MailModule {}
