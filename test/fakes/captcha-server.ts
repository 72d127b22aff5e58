import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';

/** What the fake verifier answers, chosen by the `response` (CAPTCHA token) it is sent. */
export const CAPTCHA_TOKENS = {
  pass: 'pass',
  fail: 'fail',
  /** HTTP 500. */
  error: 'error',
  /** 200 with a body that is not JSON. */
  garbage: 'garbage',
  /** 200 JSON without a boolean `success`. */
  noVerdict: 'no-verdict',
  /** Answers only after `slowMs`, beyond the service's timeout. */
  slow: 'slow',
} as const;

export interface CaptchaVerification {
  contentType: string | undefined;
  form: Record<string, string>;
}

export interface CaptchaVerifier {
  /** `CAPTCHA_VERIFY_URL` for the service under test. */
  url: string;
  /** Every verification request received, in order. */
  requests: CaptchaVerification[];
  close(): Promise<void>;
}

async function readForm(request: IncomingMessage): Promise<Record<string, string>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
}

/** A real HTTP server on 127.0.0.1 (random port) speaking the siteverify protocol. */
export async function startCaptchaVerifier(slowMs = 7000): Promise<CaptchaVerifier> {
  const requests: CaptchaVerification[] = [];
  const pending = new Set<NodeJS.Timeout>();
  const server: Server = createServer((request, response) => {
    void readForm(request).then((form) => {
      requests.push({ contentType: request.headers['content-type'], form });
      const json = (status: number, body: unknown) =>
        response.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
      switch (form.response) {
        case CAPTCHA_TOKENS.pass:
          return json(200, { success: true });
        case CAPTCHA_TOKENS.error:
          return json(500, { success: false });
        case CAPTCHA_TOKENS.garbage:
          return response.writeHead(200, { 'Content-Type': 'text/html' }).end('<html>oops</html>');
        case CAPTCHA_TOKENS.noVerdict:
          return json(200, { 'error-codes': [] });
        case CAPTCHA_TOKENS.slow: {
          const timer = setTimeout(() => {
            pending.delete(timer);
            json(200, { success: true });
          }, slowMs);
          pending.add(timer);
          return;
        }
        default:
          return json(200, { success: false, 'error-codes': ['invalid-input-response'] });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/siteverify`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        pending.forEach((timer) => clearTimeout(timer));
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
