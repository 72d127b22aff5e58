import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Transactions } from '../database/transactions';
import { v5 as uuidV5 } from 'uuid';
import { AppError } from '../common/errors/app-error';
import { sameUuid } from '../common/utils/uuid';
import { type AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';
import { isForbiddenLiteralHost } from './channels/webhook-target';
import { NotificationPrefDto, UpsertNotificationPrefDto } from './dto/notification-pref.dto';
import { NotificationChannelName } from './entities/notification-pref.entity';
import { toNotificationPrefDto } from './notifications.mapper';
import { NotificationsRepository } from './notifications.repository';

/** Standard Webhooks secret: `whsec_` + base64 of a 32-byte key. */
const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/** The name space of the ids of EMAIL preferences (a UUIDv5 of the user's id). */
const EMAIL_PREF_NAMESPACE = '0d4c5d3e-6a55-4f44-9d6a-2f9a3c1e7b20';

/**
 * The id of the user's EMAIL preference before one is saved, and of the record a PUT then creates, so that a
 * client keeps the id it listed. Derived, not stored: the same on every instance and every read.
 */
export const defaultEmailPrefId = (userId: string): string =>
  uuidV5(userId.toLowerCase(), EMAIL_PREF_NAMESPACE);

@Injectable()
export class NotificationPrefsService {
  constructor(
    @InjectConfig() private readonly config: AppConfig,
    private readonly notifications: NotificationsRepository,
    private readonly transactions: Transactions,
  ) {}

  /** EMAIL is always listed: without a saved record, as delivery treats it (the account's address, enabled). */
  async list(userId: string): Promise<NotificationPrefDto[]> {
    return (await this.notifications.listPrefs(userId, defaultEmailPrefId(userId))).map(
      toNotificationPrefDto,
    );
  }

  /**
   * Deletes a saved preference; for EMAIL the account's address, enabled, applies again. The id of the EMAIL
   * preference listed before any was saved names nothing to delete: 204 all the same, as the state asked for
   * holds. Any other id the user has no preference of → 404.
   */
  async remove(userId: string, id: string): Promise<void> {
    const deleted = await this.notifications.deletePref(userId, id);
    if (!deleted && !sameUuid(id, defaultEmailPrefId(userId)))
      throw AppError.notFound('Notification preference');
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
    const row = await this.transactions.writeOne((db) =>
      this.notifications.upsertPref(db, userId, {
        channel: body.channel,
        address: body.address,
        isEnabled: body.isEnabled,
        secret: isWebhook ? newWebhookSecret() : null,
        id: body.channel === NotificationChannelName.EMAIL ? defaultEmailPrefId(userId) : null,
      }),
    );
    return toNotificationPrefDto(row);
  }
}
