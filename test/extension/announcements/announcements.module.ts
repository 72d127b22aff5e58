import { Module } from '@nestjs/common';
import { AccessModule } from '../../../src/access/access.module';
import { TransactionsModule } from '../../../src/database/transactions';
import { IdempotencyModule } from '../../../src/idempotency/idempotency.module';
import { NotificationsModule } from '../../../src/notifications/notifications.module';
import { AnnouncementsController } from './announcements.controller';
import { AnnouncementsRepository } from './announcements.repository';
import { AnnouncementsService } from './announcements.service';

/** Announcements of a class; each new one notifies through the notifications module, in its transaction. */
@Module({
  imports: [IdempotencyModule, AccessModule, NotificationsModule, TransactionsModule],
  controllers: [AnnouncementsController],
  providers: [AnnouncementsRepository, AnnouncementsService],
})
export class AnnouncementsModule {}
