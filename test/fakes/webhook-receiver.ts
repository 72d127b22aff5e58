import { createServer, IncomingHttpHeaders } from 'node:http';
import { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body. */
  body: unknown;
  /** The body as received, for a signature check of the test's own. */
  raw: string;
  /** The Standard Webhooks signature checked out with the secret registered for the path. */
  verified: boolean;
  /** The status this receiver answered with. */
  status: number;
}

export interface WebhookReceiver {
  /** URL of a hook path on this receiver, e.g. `url('/alice')`. */
  url(path: string): string;
  /** The signing secret of the preference that posts to `path` (its `secret` field). */
  setSecret(path: string, secret: string): void;
  /** Answers the next `count` requests to `path` with `status` (then 204 again). */
  failNext(path: string, count: number, status?: number): void;
  /** Answers every request to `path` after `ms` milliseconds. */
  delay(path: string, ms: number): void;
  /** Every request received, in arrival order (failed ones included). */
  received: ReceivedWebhook[];
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 (random port) that records webhooks and verifies their signatures. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const secrets = new Map<string, string>();
  const failures = new Map<string, { count: number; status: number }>();
  const delays = new Map<string, number>();

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      const raw = Buffer.concat(chunks).toString('utf8');
      const secret = secrets.get(path);
      let verified = false;
      if (secret) {
        try {
          new Webhook(secret).verify(raw, req.headers as Record<string, string>);
          verified = true;
        } catch {
          verified = false;
        }
      }
      const failure = failures.get(path);
      const status = failure && failure.count > 0 ? failure.status : 204;
      if (failure) failure.count -= 1;
      received.push({ path, headers: req.headers, body: JSON.parse(raw), raw, verified, status });
      setTimeout(() => res.writeHead(status).end(), delays.get(path) ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    setSecret: (path, secret) => void secrets.set(path, secret),
    failNext: (path, count, status = 500) => void failures.set(path, { count, status }),
    delay: (path, ms) => void delays.set(path, ms),
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
