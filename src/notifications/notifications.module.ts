import { RunningJobs } from '../common/jobs/running-jobs';
import { Module } from '@nestjs/common';
import { MailModule } from '../mail/mail.module';
import { EmailChannel } from './channels/email.channel';
import { MessengerChannel } from './channels/messenger.channel';
import { NOTIFICATION_CHANNELS, NotificationChannel } from './channels/notification-channel';
import { WebhookChannel } from './channels/webhook.channel';
import { DeliveryOutbox } from './delivery/delivery-outbox';
import { DeliveryRetention } from './delivery/delivery-retention';
import { DeliveryWorker } from './delivery/delivery-worker';
import { NotificationDispatcher } from './delivery/notification-dispatcher';
import { NotificationJobs } from './notification-jobs';
import { NotificationPrefsService } from './notification-prefs.service';
import { NotificationPrefsController, NotificationsController } from './notifications.controller';
import { NotificationsService } from './notifications.service';
import { NotificationProducer } from './production/notification-producer';

/** Sends e-mail through the mail module's SMTP sender; exports the outbox for the account mails of auth. */
@Module({
  imports: [MailModule],
  controllers: [NotificationsController, NotificationPrefsController],
  providers: [
    NotificationsService,
    NotificationPrefsService,
    NotificationProducer,
    NotificationDispatcher,
    DeliveryOutbox,
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
  exports: [DeliveryOutbox],
})
export class NotificationsModule {}
