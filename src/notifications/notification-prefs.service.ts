import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppError } from '../common/errors/app-error';
import { AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';
import { isForbiddenLiteralHost } from './channels/webhook-target';
import { NotificationPrefDto, UpsertNotificationPrefDto } from './dto/notification-pref.dto';
import { NotificationChannelName } from './entities/notification-pref.entity';
import { toNotificationPrefDto } from './notifications.mapper';
import { NotificationsRepository } from './notifications.repository';

/** Standard Webhooks secret: `whsec_` + base64 of a 32-byte key. */
const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

@Injectable()
export class NotificationPrefsService {
  constructor(
    @InjectConfig() private readonly config: AppConfig,
    private readonly notifications: NotificationsRepository,
  ) {}

  async list(userId: string): Promise<NotificationPrefDto[]> {
    return (await this.notifications.listPrefs(userId)).map(toNotificationPrefDto);
  }

  /**
   * One record per (user, channel), created or replaced atomically. A WEBHOOK secret is made once, when the
   * record is created, and kept by later updates.
   */
  async upsert(userId: string, body: UpsertNotificationPrefDto): Promise<NotificationPrefDto> {
    const isWebhook = body.channel === NotificationChannelName.WEBHOOK;
    // Resolved addresses are checked at each delivery; an address that is private on its face is refused now.
    if (isWebhook && !this.config.webhook.allowPrivate && isForbiddenLiteralHost(new URL(body.address))) {
      throw AppError.validation('address must not point to a loopback, private or link-local host');
    }
    const row = await this.notifications.upsertPref(userId, {
      channel: body.channel,
      address: body.address,
      isEnabled: body.isEnabled,
      secret: isWebhook ? newWebhookSecret() : null,
    });
    return toNotificationPrefDto(row);
  }
}
