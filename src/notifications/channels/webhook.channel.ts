import { request as httpRequest, RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { LookupFunction } from 'node:net';
import { Injectable } from '@nestjs/common';
import { Webhook } from 'standardwebhooks';
import { iso } from '../../common/utils/time';
import { type AppConfig } from '../../config/config';
import { InjectConfig } from '../../config/config.module';
import { NotificationChannelName } from '../entities/notification-pref.entity';
import {
  DeliveryEvent,
  DeliveryJob,
  NotificationChannel,
  PermanentDeliveryError,
} from './notification-channel';
import { Deadline, VettedAddress, vetWebhookHost } from './webhook-target';

/**
 * POSTs the event as JSON, signed per Standard Webhooks with the preference's secret. The delivery id is the
 * `webhook-id`, the same on every retry (a redelivery keeps the id of the delivery it repeats). Redirects are
 * not followed; only 2xx counts as delivered.
 */
@Injectable()
export class WebhookChannel implements NotificationChannel {
  readonly name = NotificationChannelName.WEBHOOK;
  readonly concurrency = 20;

  constructor(@InjectConfig() private readonly config: AppConfig) {}

  async send(job: DeliveryJob): Promise<void> {
    if (!job.event || !job.secret)
      throw new PermanentDeliveryError('webhook delivery without event or secret');
    const { event } = job;
    const body = JSON.stringify({
      id: event.id,
      type: event.type,
      createdAt: iso(event.createdAt),
      data: eventData(event),
    });
    const timestamp = new Date();
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'classroom-task-service-webhooks',
      'webhook-id': job.webhookId,
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': new Webhook(job.secret).sign(job.webhookId, timestamp, body),
    };
    const url = new URL(job.address);
    // One deadline for the name lookup and the request: the whole attempt ends within the timeout.
    const { timeoutMs } = this.config.webhook;
    const deadline: Deadline = { signal: AbortSignal.timeout(timeoutMs), ms: timeoutMs };
    const target = await vetWebhookHost(url, this.config.webhook.allowPrivate, deadline);
    const status = await post(url, target, headers, body, deadline);
    if (status >= 300 && status < 400) throw new Error(`redirect not followed (HTTP ${status})`);
    if (status < 200 || status >= 300) throw new Error(`HTTP ${status}`);
  }
}

/** The subject's fields (a task's, or else the class's), then what the notification's type adds. */
function eventData(event: DeliveryEvent): object {
  // A TEST event has no subject.
  if (!('classId' in event)) return {};
  const subject =
    event.taskId === null
      ? { classId: event.classId, className: event.className }
      : {
          taskId: event.taskId,
          taskTitle: event.taskTitle,
          classId: event.classId,
          className: event.className,
          startAt: iso(event.startAt),
          dueAt: iso(event.dueAt),
        };
  return { ...subject, ...event.data };
}

/** A POST that connects to the vetted address only, gives up at the deadline, and answers the status. */
function post(
  url: URL,
  target: VettedAddress,
  headers: Record<string, string>,
  body: string,
  deadline: Deadline,
) {
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [target]);
    else callback(null, target.address, target.family);
  };
  const options: RequestOptions = {
    method: 'POST',
    headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
    lookup: pinned,
    signal: deadline.signal,
  };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<number>((resolve, reject) => {
    const fail = (error: Error) =>
      reject(error.name === 'AbortError' ? new Error(`timed out after ${deadline.ms} ms`) : error);
    const req = send(url, options, (res) => {
      // The status decides: waiting for a body the receiver never finishes would turn a 2xx into a timeout
      // and a duplicate at the next retry. The body is read and dropped (which frees the socket), until the
      // timeout destroys the request.
      resolve(res.statusCode ?? 0);
      res.on('error', () => undefined);
      res.resume();
    });
    req.on('error', fail);
    req.end(body);
  });
}
