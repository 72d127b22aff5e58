import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';

export interface TelegramMessage {
  /** The bot token from the path `/bot<token>/sendMessage`. */
  token: string;
  chatId: string;
  text: string;
}

export interface TelegramServer {
  /** `TELEGRAM_API_URL` for the service under test. */
  url: string;
  /** Messages accepted (answered `ok: true`), in arrival order. */
  messages: TelegramMessage[];
  /** Answers the next `count` sendMessage calls with HTTP `status`, `ok: false` and `description`. */
  failNext(count: number, status: number, description?: string): void;
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 (random port) speaking the Bot API's sendMessage. */
export async function startTelegramServer(): Promise<TelegramServer> {
  const messages: TelegramMessage[] = [];
  let failures = { count: 0, status: 500, description: 'Simulated failure' };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const match = /^\/bot([^/]+)\/sendMessage$/.exec(req.url ?? '');
      const answer = (status: number, body: object) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.method !== 'POST' || !match)
        return answer(404, { ok: false, error_code: 404, description: 'Not Found' });
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        chat_id?: unknown;
        text?: unknown;
      };
      if (failures.count > 0) {
        failures.count -= 1;
        return answer(failures.status, {
          ok: false,
          error_code: failures.status,
          description: failures.description,
        });
      }
      if (typeof body.chat_id !== 'string' || typeof body.text !== 'string') {
        return answer(400, { ok: false, error_code: 400, description: 'Bad Request: message text is empty' });
      }
      messages.push({ token: match[1], chatId: body.chat_id, text: body.text });
      answer(200, {
        ok: true,
        result: { message_id: messages.length, chat: { id: body.chat_id }, text: body.text },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    messages,
    failNext: (count, status, description = 'Simulated failure') =>
      void (failures = { count, status, description }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
