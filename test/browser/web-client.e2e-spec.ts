import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { BrowserContext, chromium, Page } from 'playwright-core';
import { apiError } from '../utils/expect';
import { freePort } from '../utils/free-port';
import { createSharedDatabase, IDLE_JOBS } from '../utils/notifications';
import { createTask } from '../utils/tasks';
import { createTestApp, TestApp } from '../utils/test-app';
import { createUser, TEST_PASSWORD, TestUser } from '../utils/users';

/**
 * The web client's paths in a real headless Chromium (Debian's `chromium` package, driven by playwright-core):
 * a page served from another origin than the API, as the web client is. `.ci/run` installs the package.
 */
const CHROMIUM = '/usr/bin/chromium';
const runsHere = existsSync(CHROMIUM) || process.env.CI === 'true';
if (!runsHere) {
  console.warn(
    `web-client.e2e-spec: skipped, no Chromium at ${CHROMIUM} (apt-get install chromium); it always runs under CI=true`,
  );
}
const describeInChromium = runsHere ? describe : describe.skip;

/** The loopback is the only network: nothing Chromium would fetch for itself. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A 1×1 PNG. */
const PIXEL_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const PAGE = '<!doctype html><meta charset="utf-8"><title>Web client</title><img id="picture" alt="">';

/** Serves the page on its own origin. */
async function startPageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((request, response) => {
    if (request.url === '/') {
      response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      response.end(PAGE);
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return { server, origin: `http://127.0.0.1:${address.port}` };
}

/** Puts a SENT notification in the user's inbox, as the jobs would. */
async function addNotification(db: Client, user: TestUser, taskId: string, title: string): Promise<void> {
  await db.query(
    `INSERT INTO notifications (user_id, type, task_id, class_id, task_title, class_name, hours_before, due_at,
                                title, content, status)
     SELECT $1, 'TASK_DUE_REMINDER', t.id, t.class_id, t.title, 'Personal', random() * 1000, now() + interval '1 day',
            $3, 'Due soon', 'SENT'
       FROM tasks t WHERE t.id = $2`,
    [user.id, taskId, title],
  );
}

describeInChromium('the web client in headless Chromium, on another origin', () => {
  let database: { url: string; drop(): Promise<void> };
  /** Outside the service, which is down for a while. */
  let db: Client;
  let api: TestApp | undefined;
  let apiPort: number;
  let pageServer: Server;
  let pageOrigin: string;
  let profile: string;
  let browser: BrowserContext;
  let page: Page;
  let user: TestUser;
  let token: string;
  let taskId: string;

  const apiUrl = () => `http://127.0.0.1:${apiPort}`;
  /** The API on its fixed port, so that the page's URLs (the EventSource's) stay valid across a restart. */
  const startApi = async () => {
    api = await createTestApp(
      { ...IDLE_JOBS, CORS_ORIGINS: pageOrigin, PUBLIC_URL: apiUrl() },
      { databaseUrl: database.url },
    );
    await api.app.listen(apiPort, '127.0.0.1');
    return api;
  };
  const stopApi = async () => {
    await api?.close();
    api = undefined;
  };

  beforeAll(async () => {
    database = await createSharedDatabase();
    db = new Client({ connectionString: database.url });
    await db.connect();
    apiPort = await freePort();
    ({ server: pageServer, origin: pageOrigin } = await startPageServer());
    const ctx = await startApi();
    user = await createUser(ctx);
    taskId = (await createTask(ctx, user.personalClassId, user, { title: 'Draw a pixel' })).id;
    profile = mkdtempSync(join(tmpdir(), 'cts-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
    });
    page = await browser.newPage();
    await page.goto(`${pageOrigin}/`);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stopApi();
    await db?.end();
    await new Promise((resolve) => pageServer?.close(resolve));
    await database?.drop();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('logs in, and reads the {error, code} of bodies the service could not parse or take', async () => {
    const result = await page.evaluate(
      async ({ base, email, password }) => {
        const json = { 'Content-Type': 'application/json' };
        const login = await fetch(`${base}/auth/login`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ email, password }),
        });
        const session = await login.json();
        const send = async (body: string) => {
          const res = await fetch(`${base}/classes`, {
            method: 'POST',
            headers: { ...json, Authorization: `Bearer ${session.token}` },
            body,
          });
          return { status: res.status, body: await res.json(), requestId: res.headers.get('X-Request-Id') };
        };
        return {
          login: login.status,
          token: session.token as string,
          malformed: await send('{"name":'),
          tooLarge: await send(JSON.stringify({ name: 'x'.repeat(1024 * 1024) })),
        };
      },
      { base: apiUrl(), email: user.email, password: TEST_PASSWORD },
    );
    expect(result.login).toBe(200);
    token = result.token;
    expect(result.malformed).toEqual({
      status: 400,
      body: apiError('VALIDATION_ERROR'),
      requestId: expect.any(String),
    });
    expect(result.tooLarge).toMatchObject({ status: 413, body: apiError('PAYLOAD_TOO_LARGE') });
  });

  it('uploads an image with FormData and shows it through its signed URL', async () => {
    const result = await page.evaluate(
      async ({ base, auth, task, png }) => {
        const form = new FormData();
        const bytes = Uint8Array.from(atob(png), (c) => c.charCodeAt(0));
        form.append('file', new Blob([bytes], { type: 'image/png' }), 'pixel.png');
        const upload = await fetch(`${base}/tasks/${task}/attachments`, {
          method: 'POST',
          headers: { Authorization: auth },
          body: form,
        });
        const attachment = await upload.json();
        const signed = await fetch(`${base}/files/${attachment.fileKey}/url`, {
          headers: { Authorization: auth },
        });
        const { url } = await signed.json();
        const image = document.getElementById('picture') as HTMLImageElement;
        await new Promise((resolve, reject) => {
          image.onload = resolve;
          image.onerror = () => reject(new Error(`the image at ${url} did not load`));
          image.src = url;
        });
        return { upload: upload.status, attachment, url, naturalWidth: image.naturalWidth };
      },
      { base: apiUrl(), auth: `Bearer ${token}`, task: taskId, png: PIXEL_PNG },
    );
    expect(result.upload).toBe(201);
    expect(result.attachment).toMatchObject({ originalName: 'pixel.png', mimeType: 'image/png' });
    expect(result.url.startsWith(`${apiUrl()}/files/`)).toBe(true);
    expect(result.naturalWidth).toBeGreaterThan(0);
  });

  it('receives live notifications across a restart: EventSource resumes on its ticket with Last-Event-ID', async () => {
    await page.evaluate(
      async ({ base, auth }) => {
        const res = await fetch(`${base}/users/me/notifications/stream-ticket`, {
          method: 'POST',
          headers: { Authorization: auth },
        });
        const { ticket } = await res.json();
        const state = { opens: 0, received: [] as string[], source: null as EventSource | null };
        Object.assign(window, { live: state });
        state.source = new EventSource(`${base}/users/me/notifications/stream?ticket=${ticket}`);
        state.source.onopen = () => (state.opens += 1);
        state.source.addEventListener('notification', (event) =>
          state.received.push(JSON.parse(event.data).title),
        );
      },
      { base: apiUrl(), auth: `Bearer ${token}` },
    );
    type Live = { opens: number; received: string[]; source: EventSource };
    const live = (): Promise<{ opens: number; received: string[]; readyState: number }> =>
      page.evaluate(() => {
        const state = (window as unknown as { live: Live }).live;
        return { opens: state.opens, received: state.received, readyState: state.source.readyState };
      });
    const waitForLive = (what: string, check: string) =>
      page.waitForFunction(check, undefined, { timeout: 30_000, polling: 100 }).catch(async () => {
        throw new Error(`waited for ${what}; the page has ${JSON.stringify(await live())}`);
      });

    await waitForLive('the stream to open', 'window.live.opens === 1');
    await addNotification(db, user, taskId, 'Before the restart');
    await waitForLive('the first notification', 'window.live.received.length === 1');

    await stopApi();
    // Made while the service is down: only a replay after Last-Event-ID can bring it.
    await addNotification(db, user, taskId, 'During the restart');
    await startApi();
    await waitForLive('the stream to reopen', 'window.live.opens === 2');
    await waitForLive('the missed notification', 'window.live.received.length === 2');
    await addNotification(db, user, taskId, 'After the restart');
    await waitForLive('the new notification', 'window.live.received.length === 3');
    expect(await live()).toEqual({
      opens: 2,
      received: ['Before the restart', 'During the restart', 'After the restart'],
      readyState: 1,
    });
  }, 90_000);
});
