import dns from 'node:dns/promises';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { AppConfig } from '../../config/config';
import { NotificationChannelName } from '../entities/notification-pref.entity';
import { DeliveryJob } from './notification-channel';
import { WebhookChannel } from './webhook.channel';

describe('WebhookChannel', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    // `/slow` never answers; `/stalled-body` answers 200 at once and never finishes the body.
    server = createServer((req, res) => {
      if (req.url === '/stalled-body') res.writeHead(200, { 'content-length': '100' }).write('{');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const job = (address: string): DeliveryJob => ({
    id: 'msg_1',
    webhookId: 'msg_1',
    channel: NotificationChannelName.WEBHOOK,
    address,
    attempt: 1,
    subject: 'Title',
    text: 'Content',
    html: null,
    secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
    event: {
      id: '9f1c1b7e-0000-4000-8000-000000000001',
      type: 'TASK_PUBLISHED',
      createdAt: new Date(),
      taskId: '9f1c1b7e-0000-4000-8000-000000000002',
      taskTitle: 'Task',
      classId: '9f1c1b7e-0000-4000-8000-000000000003',
      className: 'Class',
      startAt: null,
      dueAt: null,
      data: null,
    },
  });

  /** A channel that gives up after 200 ms. */
  function channelWithShortTimeout(): WebhookChannel {
    return new WebhookChannel({ webhook: { allowPrivate: true, timeoutMs: 200 } } as AppConfig);
  }

  it('gives up on an endpoint that does not answer within the timeout', async () => {
    const channel = channelWithShortTimeout();
    const started = Date.now();
    await expect(channel.send(job(`http://127.0.0.1:${port}/slow`))).rejects.toThrow(
      'timed out after 200 ms',
    );
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('counts a 2xx status as delivered without waiting for the body, which the receiver may never finish', async () => {
    // Waiting for the body timed out, and the receiver got the same event again at every retry.
    await expect(
      channelWithShortTimeout().send(job(`http://127.0.0.1:${port}/stalled-body`)),
    ).resolves.toBeUndefined();
  });

  it('counts name resolution in the timeout', async () => {
    // A name server that never answers: the attempt must end within the timeout all the same.
    const lookup = jest.spyOn(dns, 'lookup').mockReturnValue(new Promise(() => undefined));
    try {
      const started = Date.now();
      await expect(channelWithShortTimeout().send(job('http://hangs.example/hook'))).rejects.toThrow(
        'cannot resolve hangs.example: timed out after 200 ms',
      );
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      lookup.mockRestore();
    }
  });
});
