import { Injectable } from '@nestjs/common';
import { type AppConfig } from '../../config/config';
import { InjectConfig } from '../../config/config.module';
import { NotificationChannelName } from '../entities/notification-pref.entity';
import { DeliveryJob, NotificationChannel, PermanentDeliveryError } from './notification-channel';

const TIMEOUT_MS = 10_000;

/** Telegram Bot API `sendMessage` to the preference's chat id. */
@Injectable()
export class MessengerChannel implements NotificationChannel {
  readonly name = NotificationChannelName.MESSENGER;
  // Telegram allows a bot about 30 messages per second.
  readonly concurrency = 5;

  constructor(@InjectConfig() private readonly config: AppConfig) {}

  async send(job: DeliveryJob): Promise<void> {
    const { botToken, apiUrl } = this.config.telegram;
    if (!botToken) throw new PermanentDeliveryError('TELEGRAM_BOT_TOKEN is not configured');
    let response: Response;
    try {
      response = await fetch(`${apiUrl}/bot${botToken}/sendMessage`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ chat_id: job.address, text: `${job.subject}\n\n${job.text}` }),
        redirect: 'error',
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      // The message is built here so the URL, which holds the bot token, never reaches the stored error.
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      const reason =
        (error as Error).name === 'TimeoutError' ? `timed out after ${TIMEOUT_MS} ms` : 'unreachable';
      throw new Error(`Telegram API ${reason}${cause ? ` (${cause})` : ''}`);
    }
    const answer = (await response.json().catch(() => null)) as { ok?: boolean; description?: string } | null;
    if (response.ok && answer?.ok === true) return;
    const message = `Telegram API HTTP ${response.status}${answer?.description ? `: ${answer.description}` : ''}`;
    // A bad chat id or a bot blocked by the user does not heal by itself; throttling and outages do.
    const permanent =
      response.status >= 400 && response.status < 500 && ![408, 429].includes(response.status);
    throw permanent ? new PermanentDeliveryError(message) : new Error(message);
  }
}
