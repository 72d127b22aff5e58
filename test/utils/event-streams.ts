import { EventSource, FetchLike } from 'eventsource';
import { TestApp } from './test-app';
import { waitFor } from './wait';

/** Starts the app's HTTP server on a free port (SSE clients need a real URL); answers its base URL. */
export async function listeningUrl(ctx: TestApp): Promise<string> {
  const server = ctx.app.getHttpServer();
  if (!server.listening) await ctx.app.listen(0, '127.0.0.1');
  const address = server.address() as { port: number };
  return `http://127.0.0.1:${address.port}`;
}

export interface ReceivedEvent {
  type: 'notification' | 'unread';
  id: string;
  data: unknown;
}

export interface StreamClient {
  events: ReceivedEvent[];
  source: EventSource;
  /** Waits for an event of `type` after the first `after` events; answers it. */
  next(type: ReceivedEvent['type'], after?: number, timeoutMs?: number): Promise<ReceivedEvent>;
  close(): void;
}

/**
 * A live inbox client on the `eventsource` package (the WHATWG EventSource for Node). `headers` go on
 * every request it makes (Authorization, a first Last-Event-ID); `query` on the URL (ticket).
 */
export async function openStream(
  baseUrl: string,
  options: { headers?: Record<string, string>; query?: string } = {},
): Promise<StreamClient> {
  const url = `${baseUrl}/users/me/notifications/stream${options.query ? `?${options.query}` : ''}`;
  const withHeaders: FetchLike = (input, init) =>
    fetch(input, { ...init, headers: { ...init?.headers, ...options.headers } });
  const source = new EventSource(url, { fetch: withHeaders });
  const events: ReceivedEvent[] = [];
  for (const type of ['notification', 'unread'] as const) {
    source.addEventListener(type, (event) =>
      events.push({ type, id: event.lastEventId, data: JSON.parse(event.data) }),
    );
  }
  await new Promise<void>((resolve, reject) => {
    source.onopen = () => resolve();
    source.onerror = (error) => reject(new Error(`stream failed: ${error.message} (${error.code})`));
  });
  source.onerror = null;
  return {
    events,
    source,
    next: (type, after = 0, timeoutMs = 2_000) =>
      waitFor(
        `a ${type} event`,
        async () => events.slice(after).find((event) => event.type === type),
        timeoutMs,
        10,
      ),
    close: () => source.close(),
  };
}
