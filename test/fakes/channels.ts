import { SmtpCapture, startSmtpCapture } from './smtp-server';
import { startTelegramServer, TelegramServer } from './telegram-server';
import { startWebhookReceiver, WebhookReceiver } from './webhook-receiver';

/** The three outside services of the notification channels, each a real local server. */
export interface ChannelFakes {
  smtp: SmtpCapture;
  telegram: TelegramServer;
  receiver: WebhookReceiver;
  /** The app's environment for them (SMTP_URL, TELEGRAM_API_URL, TELEGRAM_BOT_TOKEN). */
  env(botToken: string): Record<string, string>;
  close(): Promise<void>;
}

export async function startChannelFakes(): Promise<ChannelFakes> {
  const [smtp, telegram, receiver] = await Promise.all([
    startSmtpCapture(),
    startTelegramServer(),
    startWebhookReceiver(),
  ]);
  return {
    smtp,
    telegram,
    receiver,
    env: (botToken) => ({ SMTP_URL: smtp.url, TELEGRAM_API_URL: telegram.url, TELEGRAM_BOT_TOKEN: botToken }),
    close: async () => {
      await Promise.all([smtp.close(), telegram.close(), receiver.close()]);
    },
  };
}
