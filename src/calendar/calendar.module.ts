import { Module } from '@nestjs/common';
import { CalendarController, CalendarFeedController } from './calendar.controller';
import { CalendarFeeds } from './calendar-feeds.service';
import { CalendarRepository } from './calendar.repository';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { TransactionsModule } from '../database/transactions';

/** The calendar feed of task deadlines; its SQL takes the task listing rule from access. */
@Module({
  imports: [IdempotencyModule, TransactionsModule],
  controllers: [CalendarFeedController, CalendarController],
  providers: [CalendarRepository, CalendarFeeds],
})
export class CalendarModule {}
