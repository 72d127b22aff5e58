import { SmtpCapture, startSmtpCapture } from './smtp-server';
import { startTelegramServer, TelegramServer } from './telegram-server';
import { startWebhookReceiver, WebhookReceiver } from './webhook-receiver';

/** The three outside services of the notification channels, each a real local server. */
export interface ChannelFakes {
  smtp: SmtpCapture;
  telegram: TelegramServer;
  receiver: WebhookReceiver;
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
    close: async () => {
      await Promise.all([smtp.close(), telegram.close(), receiver.close()]);
    },
  };
}
