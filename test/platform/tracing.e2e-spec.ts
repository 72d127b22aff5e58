import { OtlpReceiver, ReceivedSpan, startOtlpReceiver } from '../fakes/otlp-receiver';
import { startWebhookReceiver, WebhookReceiver } from '../fakes/webhook-receiver';
import { IDLE_JOBS, setPref } from '../utils/notifications';
import { createClass } from '../utils/classes';
import { useServiceProcesses } from '../utils/service-process';
import { createUser } from '../utils/users';
import { waitFor } from '../utils/wait';

/** The spans of `root`'s trace below it, at any depth. */
function descendants(spans: ReceivedSpan[], root: ReceivedSpan): ReceivedSpan[] {
  const below = new Set([root.spanId]);
  const found: ReceivedSpan[] = [];
  for (let grew = true; grew;) {
    grew = false;
    for (const span of spans) {
      if (span.traceId === root.traceId && below.has(span.parentSpanId) && !below.has(span.spanId)) {
        below.add(span.spanId);
        found.push(span);
        grew = true;
      }
    }
  }
  return found;
}

describe('Traces (OpenTelemetry over OTLP/HTTP)', () => {
  // The test app's own jobs stay idle: the service process is the one that delivers, and traces.
  const { ctx, start } = useServiceProcesses(IDLE_JOBS);
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  let hooks: WebhookReceiver;
  beforeAll(async () => {
    hooks = await startWebhookReceiver();
  });
  afterAll(async () => Promise.all([receiver.close(), hooks.close()]));

  /** The server span of the request with X-Request-Id `requestId`, once exported. */
  const serverSpan = (requestId: string): Promise<ReceivedSpan> =>
    waitFor(
      `the span of request ${requestId}`,
      async () =>
        receiver.spans.find((span) => span.kind === 2 && span.attributes['http.request_id'] === requestId),
      20_000,
    );

  it("a request's span has its route, its statements as children without their values, and its trace id in the log", async () => {
    const owner = await createUser(ctx);
    const cls = await createClass(ctx, owner, { name: 'Traced class' });
    await setPref(ctx, owner, { channel: 'WEBHOOK', address: hooks.url('/traced') });
    const service = await start({
      WEBHOOK_ALLOW_PRIVATE: 'true',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      // Spans are sent in batches: at once here, instead of every 5 s.
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    const response = await fetch(`http://127.0.0.1:${service.port}/classes/${cls.id}`, {
      headers: { Authorization: owner.auth, 'X-Request-Id': 'traced-request-1' },
    });
    expect(response.status).toBe(200);

    const request = await serverSpan('traced-request-1');
    expect(request.attributes['http.route']).toBe('/classes/:classId');
    expect(request.name).toBe('GET /classes/:classId');
    const statements = await waitFor(
      'the statement spans of the request',
      async () => {
        const found = descendants(receiver.spans, request).filter((span) => span.name.startsWith('pg.query'));
        return found.length > 0 && found;
      },
      20_000,
    );
    for (const statement of statements) {
      const text = String(statement.attributes['db.query.text'] ?? statement.attributes['db.statement']);
      expect(text).toMatch(/\bSELECT\b/i);
      // Bound values stay out of the trace: the class id, the user id (the token's subject).
      expect(JSON.stringify(statement)).not.toContain(cls.id);
      expect(JSON.stringify(statement)).not.toContain(owner.id);
    }
    expect(
      statements.some((span) =>
        /\bclasses\b/.test(String(span.attributes['db.query.text'] ?? span.attributes['db.statement'])),
      ),
    ).toBe(true);

    // The request's log line names the trace.
    const line = await waitFor('the request log line', async () =>
      service
        .output()
        .split('\n')
        .filter((text) => text.startsWith('{'))
        .map((text) => JSON.parse(text) as { msg?: string; req?: { id?: string }; trace_id?: string })
        .find((entry) => entry.msg === 'request completed' && entry.req?.id === 'traced-request-1'),
    );
    expect(line.trace_id).toBe(request.traceId);

    // A credential in the URL stays out of the trace, as out of the log.
    const secret = 'one-time-secret-0123456789';
    await fetch(`http://127.0.0.1:${service.port}/auth/verify-token?token=${secret}`, {
      headers: { 'X-Request-Id': 'traced-request-2' },
    });
    const tokenCheck = await serverSpan('traced-request-2');
    expect(tokenCheck.attributes['url.query']).toBe('token=[REDACTED]');
    expect(JSON.stringify(receiver.spans)).not.toContain(secret);
    // The jobs have spans of their own, their statements below them (the file sweep runs at start).
    const sweep = receiver.spans.find((span) => span.name === 'job files.sweep');
    expect(sweep).toBeDefined();
    expect(descendants(receiver.spans, sweep!).some((span) => span.name.startsWith('pg.query'))).toBe(true);
    // A delivery attempt has its span, and the webhook's POST its client span below it.
    const test = await fetch(`http://127.0.0.1:${service.port}/users/me/notification-prefs/WEBHOOK/test`, {
      method: 'POST',
      headers: { Authorization: owner.auth },
    });
    expect(test.status).toBe(202);
    const delivery = await waitFor(
      'the webhook delivery span',
      async () => receiver.spans.find((span) => span.name === 'deliver WEBHOOK'),
      20_000,
    );
    const post = await waitFor(
      'the webhook POST below it',
      async () =>
        descendants(receiver.spans, delivery).find(
          (span) => span.kind === 3 && span.attributes['http.request.method'] === 'POST',
        ),
      20_000,
    );
    // Its origin only: a webhook's path is often its secret (and the Telegram API's holds the bot token).
    expect(post.attributes['url.full']).toBe(new URL(hooks.url('/traced')).origin);
    expect(JSON.stringify(receiver.spans)).not.toContain(hooks.url('/traced'));
    expect(hooks.received.map((request) => request.path)).toEqual(['/traced']);
    // Traces only: no metrics or logs are exported over OTLP.
    expect(receiver.otherPaths).toEqual([]);
  });
});
