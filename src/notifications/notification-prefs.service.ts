import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppError } from '../common/errors/app-error';
import { AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';
import { isForbiddenLiteralHost } from './channels/webhook-target';
import { NotificationPrefDto, UpsertNotificationPrefDto } from './dto/notification-pref.dto';
import { NotificationChannelName } from './entities/notification-pref.entity';
import { PrefRow, toNotificationPrefDto } from './notifications.mapper';

const PREF_COLUMNS = `id, channel, address, is_enabled AS "isEnabled", secret`;

/** Standard Webhooks secret: `whsec_` + base64 of a 32-byte key. */
const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

@Injectable()
export class NotificationPrefsService {
  constructor(
    @InjectConfig() private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  async list(userId: string): Promise<NotificationPrefDto[]> {
    const rows: PrefRow[] = await this.dataSource.query(
      `SELECT ${PREF_COLUMNS} FROM notification_prefs
        WHERE user_id = $1
        ORDER BY array_position(ARRAY['EMAIL', 'WEBHOOK', 'MESSENGER']::varchar[], channel)`,
      [userId],
    );
    return rows.map(toNotificationPrefDto);
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
    const [row]: PrefRow[] = await this.dataSource.query(
      `INSERT INTO notification_prefs (user_id, channel, address, is_enabled, secret)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (user_id, channel)
       DO UPDATE SET address = EXCLUDED.address, is_enabled = EXCLUDED.is_enabled, updated_at = now()
       RETURNING ${PREF_COLUMNS}`,
      [userId, body.channel, body.address, body.isEnabled, isWebhook ? newWebhookSecret() : null],
    );
    return toNotificationPrefDto(row);
  }
}
