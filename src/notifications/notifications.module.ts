import { RunningJobs } from '../common/jobs/running-jobs';
import { MetricsModule } from '../common/metrics/metrics.module';
import { Module } from '@nestjs/common';
import { DatabaseOutageModule } from '../common/errors/database-outage';
import { MailModule } from '../mail/mail.module';
import { EmailChannel } from './channels/email.channel';
import { MessengerChannel } from './channels/messenger.channel';
import { NOTIFICATION_CHANNELS, NotificationChannel } from './channels/notification-channel';
import { WebhookChannel } from './channels/webhook.channel';
import { DeliveriesController } from './deliveries.controller';
import { DeliveryLogService } from './delivery-log.service';
import { DeliveriesRepository } from './delivery/deliveries.repository';
import { DeliveryOutbox } from './delivery/delivery-outbox';
import { OutboxMetrics } from './delivery/outbox-metrics';
import { DeliveryRetention } from './delivery/delivery-retention';
import { DeliveryWorker } from './delivery/delivery-worker';
import { NotificationDispatcher } from './delivery/notification-dispatcher';
import { NotificationJobs } from './notification-jobs';
import { NotificationScheduleController } from './notification-schedule.controller';
import { NotificationScheduleService } from './notification-schedule.service';
import { NotificationSchedulesRepository } from './schedule/notification-schedules.repository';
import { NotificationPrefsService } from './notification-prefs.service';
import { NotificationPrefsController, NotificationsController } from './notifications.controller';
import { NotificationsRepository } from './notifications.repository';
import { NotificationsService } from './notifications.service';
import { NotificationProducer } from './production/notification-producer';
import { Notifier } from './production/notifier';
import { InboxStreams } from './stream/inbox-streams';
import { InboxStreamsRepository } from './stream/inbox-streams.repository';
import { StreamTickets } from './stream/stream-tickets';
import { PgListenerModule } from '../database/pg-listener';
import { TransactionsModule } from '../database/transactions';
import { IdempotencyModule } from '../idempotency/idempotency.module';

/**
 * Sends e-mail through the mail module's SMTP sender; exports the outbox for the account mails of auth, the
 * `Notifier` through which every module produces its notifications (see `production/`), and the stream
 * tickets for auth's authentication guard.
 */
@Module({
  // The outage: the jobs and the delivery worker report database failures there.
  imports: [
    IdempotencyModule,
    MailModule,
    DatabaseOutageModule,
    MetricsModule,
    PgListenerModule,
    TransactionsModule,
  ],
  controllers: [
    NotificationsController,
    NotificationPrefsController,
    NotificationScheduleController,
    DeliveriesController,
  ],
  providers: [
    NotificationsRepository,
    DeliveriesRepository,
    NotificationsService,
    NotificationPrefsService,
    NotificationSchedulesRepository,
    NotificationScheduleService,
    InboxStreamsRepository,
    InboxStreams,
    StreamTickets,
    DeliveryLogService,
    NotificationProducer,
    Notifier,
    NotificationDispatcher,
    DeliveryOutbox,
    OutboxMetrics,
    DeliveryWorker,
    DeliveryRetention,
    RunningJobs,
    NotificationJobs,
    EmailChannel,
    WebhookChannel,
    MessengerChannel,
    {
      provide: NOTIFICATION_CHANNELS,
      inject: [EmailChannel, WebhookChannel, MessengerChannel],
      useFactory: (...channels: NotificationChannel[]) => channels,
    },
  ],
  exports: [DeliveryOutbox, Notifier, StreamTickets],
})
export class NotificationsModule {}
