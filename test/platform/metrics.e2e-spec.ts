import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MetricsServer } from '../../src/common/metrics/metrics-server';
import { DeliveryRetention } from '../../src/notifications/delivery/delivery-retention';
import { Prometheus, PROMETHEUS, prometheusRunsHere, startPrometheus } from '../fakes/prometheus';
import { createTestApp, TestApp, useTestApp } from '../utils/test-app';
import { createClassWithRoles, createTask, uploadTaskAttachment } from '../utils/tasks';

const DEPLOY = join(__dirname, '..', '..', 'deploy');
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

if (!prometheusRunsHere) {
  console.warn(
    `metrics.e2e-spec: the Prometheus part skipped, no ${PROMETHEUS} (apt-get install prometheus); it always runs under CI=true`,
  );
}
const describeWithPrometheus = prometheusRunsHere ? describe : describe.skip;

function metricsUrl(ctx: TestApp): string {
  const port = ctx.app.get(MetricsServer).port();
  if (port === null) throw new Error('The metrics server is not listening');
  return `http://127.0.0.1:${port}/metrics`;
}

describe('Metrics', () => {
  it('are not served unless METRICS_PORT is set', async () => {
    const ctx = await createTestApp();
    try {
      expect(ctx.app.get(MetricsServer).port()).toBeNull();
      await ctx.http.get('/metrics').expect(404);
    } finally {
      await ctx.close();
    }
  });

  describe('served on METRICS_PORT', () => {
    const ctx = useTestApp({ METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' });
    let prometheus: Prometheus | undefined;
    afterAll(async () => prometheus?.close());

    it('label requests by route template, never by the URL with its ids', async () => {
      const { owner, classId } = await createClassWithRoles(ctx);
      await ctx.http.get(`/classes/${classId}`).set('Authorization', owner.auth).expect(200);
      await ctx.http.get(`/classes/${randomUUID()}`).set('Authorization', owner.auth).expect(404);
      await ctx.http.get(`/no/such/${randomUUID()}`).expect(404);
      const text = await (await fetch(metricsUrl(ctx))).text();
      expect(text).toMatch(
        /http_request_duration_seconds_count\{method="GET",route="\/classes\/:classId",status="200"\} 1\n/,
      );
      expect(text).toMatch(
        /http_request_duration_seconds_count\{method="GET",route="\/classes\/:classId",status="404"\} 1\n/,
      );
      expect(text).toMatch(
        /http_request_duration_seconds_count\{method="GET",route="unmatched",status="404"\} 1\n/,
      );
      expect(text).not.toMatch(UUID);
      // The API's own port has no metrics.
      await ctx.http.get('/metrics').expect(404);
    });

    it('include every metric the dashboard and the alert rules query', async () => {
      const text = await (await fetch(metricsUrl(ctx))).text();
      const served = new Set([...text.matchAll(/^# TYPE (\w+) /gm)].map((match) => match[1]));
      const dashboard = JSON.parse(readFileSync(join(DEPLOY, 'grafana', 'dashboard.json'), 'utf8')) as {
        panels: { targets?: { expr: string }[] }[];
      };
      const queries = [
        ...dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr)),
        ...[
          ...readFileSync(join(DEPLOY, 'prometheus', 'alerts.yml'), 'utf8').matchAll(
            /expr: (?:>-\n)?([^#]+?)\n\s+for:/g,
          ),
        ].map((match) => match[1]),
      ];
      expect(queries.length).toBeGreaterThan(20);
      const queried = new Set(
        queries.flatMap((query) =>
          [...query.matchAll(/\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b(?![(])/g)].map((match) => match[1]),
        ),
      );
      // Label names and Prometheus's own series are no metrics of the service.
      for (const name of ['job_name', 'up']) queried.delete(name);
      const missing = [...queried].filter(
        (name) => !served.has(name) && !served.has(name.replace(/_(bucket|count|sum)$/, '')),
      );
      expect(missing).toEqual([]);
    });

    describeWithPrometheus('scraped by Prometheus', () => {
      beforeAll(async () => {
        prometheus = await startPrometheus([new URL(metricsUrl(ctx)).host]);
      });

      it('answers queries for the requests, the pool, the outbox, the jobs, streams, uploads and the process', async () => {
        const { owner, classId } = await createClassWithRoles(ctx);
        const task = await createTask(ctx, classId, owner);
        await uploadTaskAttachment(ctx, task.id, owner, {
          name: 'notes.txt',
          content: Buffer.alloc(1000, 'a'),
        });
        // Webhook deliveries held by a stuck worker's claim, two of them due for a minute, one not due yet: the
        // backlog is read from the table. A mail and a message the worker sends (no SMTP: the mail is logged;
        // no bot token: the message fails).
        const mail = '{"subject":"s","text":"t","html":null}';
        await ctx.db.query(
          `INSERT INTO notification_deliveries (channel, address, payload, next_attempt_at, locked_until)
           VALUES ('WEBHOOK', 'http://a.test', $1, now() - interval '60 s', now() + interval '1 h'),
                  ('WEBHOOK', 'http://b.test', $1, now() - interval '30 s', now() + interval '1 h'),
                  ('WEBHOOK', 'http://c.test', $1, now() + interval '1 h', NULL),
                  ('EMAIL', 'someone@example.org', $1, now(), NULL),
                  ('MESSENGER', '12345', $1, now(), NULL)`,
          [mail],
        );
        await ctx.app.get(DeliveryRetention).purgeFinished();
        const p = prometheus!;
        const value = async (promql: string, accept: (value: number) => boolean = () => true) =>
          (await p.waitFor(promql, (samples) => samples.length === 1 && accept(samples[0].value)))[0].value;

        expect(await value('up{job="classroom-task-service"}', (v) => v === 1)).toBe(1);
        expect(
          await value(
            'sum(http_request_duration_seconds_count{route="/classes/:classId/tasks",method="POST",status="201"})',
          ),
        ).toBeGreaterThanOrEqual(1);
        expect(
          await value(
            'sum(http_request_duration_seconds_bucket{route="/classes/:classId/tasks",method="POST",le="+Inf"})',
          ),
        ).toBeGreaterThanOrEqual(1);
        expect(await value('db_pool_connections_idle{pool="app"}', (v) => v >= 1)).toBeGreaterThanOrEqual(1);
        expect(await value('db_pool_connections_in_use{pool="app"}')).toBeGreaterThanOrEqual(0);
        expect(await value('db_pool_waiting{pool="app"}')).toBe(0);
        expect(await value('db_outage')).toBe(0);
        expect(await value('outbox_pending{channel="WEBHOOK"}', (v) => v === 3)).toBe(3);
        expect(await value('outbox_pending{channel="EMAIL"}', (v) => v === 0)).toBe(0);
        // Every mail of the test's app (the account mails of the users made above too), each counted once.
        const [{ sent }] = await ctx.db.query<{ sent: number }[]>(
          `SELECT count(*)::int AS sent FROM notification_deliveries WHERE channel = 'EMAIL' AND status = 'SENT'`,
        );
        expect(sent).toBeGreaterThanOrEqual(1);
        expect(
          await value('outbox_deliveries_total{channel="EMAIL",outcome="sent"}', (v) => v === sent),
        ).toBe(sent);
        expect(await value('sum(outbox_deliveries_total{channel="MESSENGER",outcome=~"retry|failed"})')).toBe(
          1,
        );
        expect(await value('outbox_oldest_due_age_seconds{channel="WEBHOOK"}', (v) => v >= 60)).toBeLessThan(
          120,
        );
        expect(
          await value('job_runs_total{job_name="notifications.retention",outcome="success"}', (v) => v >= 1),
        ).toBeGreaterThanOrEqual(1);
        expect(
          await value('job_run_duration_seconds_count{job_name="notifications.retention"}', (v) => v >= 1),
        ).toBeGreaterThanOrEqual(1);
        expect(await value('uploads_total', (v) => v >= 1)).toBe(1);
        expect(await value('upload_bytes_total', (v) => v >= 1000)).toBe(1000);
        expect(await value('live_streams_open')).toBe(0);
        expect(await value('process_resident_memory_bytes')).toBeGreaterThan(0);
        expect(await value('nodejs_eventloop_lag_p99_seconds')).toBeGreaterThanOrEqual(0);
      });
    });
  });
});
