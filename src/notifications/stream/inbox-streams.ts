import { randomUUID } from 'node:crypto';
import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import type { Response } from 'express';
import { AuthUser } from '../../common/decorators/current-user.decorator';
import { AppError, ErrorCode } from '../../common/errors/app-error';
import { type AppConfig } from '../../config/config';
import { InjectConfig } from '../../config/config.module';
import { PgListener, USER_CHANGED_CHANNEL } from '../../database/pg-listener';
import { toNotificationDto } from '../notifications.mapper';
import { InboxChangeRow, InboxStreamsRepository, STREAM_REPLACED_CHANNEL } from './inbox-streams.repository';
import { ticketHash } from './stream-tickets';
import { Metrics } from '../../common/metrics/metrics';

/** Notified by the trigger of migration LiveInbox: `<userId> <notificationId>` or `<userId>`. */
export const INBOX_CHANNEL = 'notification_inbox';
/**
 * How long a stream's row counts towards the limit without a renewal: three heartbeats at the longest
 * allowed interval, so a busy instance does not lose its leases, and a crashed one frees them soon.
 */
const STREAM_LEASE_MS = 90_000;
/**
 * A client that lets this much go unread is too slow for a live feed, or stopped reading: its stream is
 * dropped (it may reconnect with Last-Event-ID).
 */
const MAX_BUFFERED_BYTES = 1024 * 1024;

interface OpenStream {
  id: string;
  userId: string;
  response: Response;
  /** The last notification sent, where a catch-up continues. */
  lastId: string | null;
  /** Ids the opening replay sent: a live event for them is not sent twice. */
  replayed: Set<string>;
  /** Writes in order: the replay first, then the live events. */
  chain: Promise<void>;
}

/**
 * The live inbox: the open Server-Sent Events streams of this instance. PostgreSQL tells every
 * instance, through its one listener connection, whose inbox changed (a trigger on `notifications`); this
 * instance reads the change once per user and writes it to that user's streams here. A stream holds no
 * database connection. Its row in `notification_streams` counts it towards the per-user limit across
 * instances; the heartbeat tick renews the rows and ends the streams whose tokens were revoked, and a change
 * of the user (USER_CHANGED_CHANNEL) checks at once.
 */
@Injectable()
export class InboxStreams implements OnModuleDestroy {
  private readonly logger = new Logger(InboxStreams.name);
  private readonly instanceId = randomUUID();
  private readonly heartbeatMs: number;
  private readonly byUser = new Map<string, Set<OpenStream>>();
  /** Changes heard and not yet read: user → notification ids (empty: the unread count changed). */
  private readonly pending = new Map<string, Set<string>>();
  private flushScheduled = false;
  private subscribed: Promise<void> | null = null;
  private listenerLost = false;
  private heartbeat: NodeJS.Timeout | undefined;
  private closing = false;

  constructor(
    @InjectConfig() config: AppConfig,
    private readonly streams: InboxStreamsRepository,
    private readonly listener: PgListener,
    metrics: Metrics,
  ) {
    this.heartbeatMs = config.notifications.streamHeartbeatMs;
    metrics.readAtScrape('live_streams_open', 'Live inbox streams open on this instance', () =>
      this.openCount(),
    );
  }

  /** The streams open on this instance, over all users. */
  private openCount(): number {
    let count = 0;
    for (const streams of this.byUser.values()) count += streams.size;
    return count;
  }

  /**
   * Opens a stream on `response` for `user`: 429 at the limit. Replays the items after `lastEventId` when
   * given, then sends the unread count, then live events until the client leaves, the tokens are revoked,
   * or (opened with `ticket`) a new stream on the same ticket replaces it.
   */
  async open(
    user: AuthUser,
    lastEventId: string | null,
    response: Response,
    ticket: string | undefined,
  ): Promise<void> {
    if (this.closing) throw new AppError(ErrorCode.SERVICE_UNAVAILABLE, 'The service is shutting down');
    await this.subscribe();
    const id = await this.streams.open(
      user.id,
      this.instanceId,
      STREAM_LEASE_MS,
      ticket === undefined ? null : ticketHash(ticket),
    );
    if (!id) throw AppError.rateLimited(this.heartbeatMs / 1000);
    response.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      // Reverse proxies (nginx) would otherwise buffer the events.
      'X-Accel-Buffering': 'no',
    });
    response.flushHeaders();
    const stream: OpenStream = {
      id,
      userId: user.id,
      response,
      lastId: null,
      replayed: new Set(),
      chain: Promise.resolve(),
    };
    this.add(stream);
    response.on('close', () => this.remove(stream));
    // The client may have left while the stream was being recorded: then 'close' has fired already.
    if (response.destroyed || !response.socket || response.socket.destroyed) this.remove(stream);
    this.enqueue(stream, async () => {
      const replay = lastEventId
        ? await this.streams.itemsAfter(user.id, lastEventId)
        : await this.streams.itemsByIds(user.id, []);
      this.send(stream, replay);
      for (const row of replay) if (row.id) stream.replayed.add(row.id);
    });
    this.startHeartbeat();
  }

  /** Ends every stream of this instance and forgets their rows, before the pool closes. */
  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    clearInterval(this.heartbeat);
    const all = this.openStreams();
    this.byUser.clear();
    for (const stream of all) stream.response.end();
    if (all.length > 0) await this.streams.close(all.map((stream) => stream.id)).catch(() => undefined);
  }

  /** Listens on first use, so an instance without streams holds no subscription. */
  private subscribe(): Promise<void> {
    this.subscribed ??= Promise.all([
      this.listener.subscribe(INBOX_CHANNEL, {
        message: (payload) => this.heard(payload),
        listening: (listening) => this.listenerChanged(listening),
      }),
      this.listener.subscribe(USER_CHANGED_CHANNEL, {
        message: (userId) => {
          const streams = this.byUser.get(userId);
          if (streams) void this.renew([...streams]);
        },
        listening: () => undefined,
      }),
      // Missed while the listener is down: the next lease renewal finds the row gone and ends the stream.
      this.listener.subscribe(STREAM_REPLACED_CHANNEL, {
        message: (payload) => {
          const [userId, streamId] = payload.split(' ');
          for (const stream of this.byUser.get(userId) ?? []) if (stream.id === streamId) this.end(stream);
        },
        listening: () => undefined,
      }),
    ]).then(() => undefined);
    return this.subscribed;
  }

  private heard(payload: string): void {
    const [userId, notificationId] = payload.split(' ');
    if (!this.byUser.has(userId)) return;
    const ids = this.pending.get(userId) ?? new Set<string>();
    if (notificationId) ids.add(notificationId);
    this.pending.set(userId, ids);
    // The notifications of one commit arrive together: one read per user for all of them.
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => void this.flush());
    }
  }

  private async flush(): Promise<void> {
    this.flushScheduled = false;
    const changes = [...this.pending];
    this.pending.clear();
    await Promise.all(
      changes.map(async ([userId, ids]) => {
        const streams = this.byUser.get(userId);
        if (!streams) return;
        const changed = await this.streams.itemsByIds(userId, [...ids]).catch((error: unknown) => {
          this.logger.warn({ err: error }, 'Could not read inbox changes for live streams');
          return null;
        });
        if (changed) for (const stream of streams) this.enqueue(stream, () => this.send(stream, changed));
      }),
    );
  }

  /** After a listener outage, changes may have been missed: every stream catches up from its last item. */
  private listenerChanged(listening: boolean): void {
    if (!listening) {
      this.listenerLost = true;
      return;
    }
    if (!this.listenerLost) return;
    this.listenerLost = false;
    this.catchUp();
  }

  private catchUp(): void {
    for (const streams of this.byUser.values()) {
      for (const stream of streams) {
        this.enqueue(stream, async () => {
          const rows = stream.lastId
            ? await this.streams.itemsAfter(stream.userId, stream.lastId)
            : await this.streams.itemsByIds(stream.userId, []);
          this.send(stream, rows);
        });
      }
    }
  }

  /** Writes the notifications among `rows` not sent yet, then the unread count. */
  private send(stream: OpenStream, rows: InboxChangeRow[]): void {
    let events = '';
    for (const row of rows) {
      if (row.id === null || stream.replayed.has(row.id)) continue;
      events += `id: ${row.id}\nevent: notification\ndata: ${JSON.stringify(toNotificationDto(row))}\n\n`;
      stream.lastId = row.id;
    }
    events += `event: unread\ndata: ${JSON.stringify({ unreadCount: rows[0].unreadCount })}\n\n`;
    this.write(stream, events);
  }

  private write(stream: OpenStream, text: string): void {
    if (stream.response.writableEnded || stream.response.destroyed) return;
    stream.response.write(text);
    if (stream.response.writableLength > MAX_BUFFERED_BYTES) {
      // end() would wait for a reader that may never come, the socket and its buffer kept meanwhile.
      stream.response.destroy();
      this.remove(stream);
    }
  }

  private enqueue(stream: OpenStream, work: () => void | Promise<void>): void {
    stream.chain = stream.chain.then(work).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'A live inbox stream failed; ending it');
      this.end(stream);
    });
  }

  /** One timer for all streams: a `:` comment each, then the leases, which also find revoked tokens. */
  private startHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => {
      const all = this.openStreams();
      if (all.length === 0) {
        clearInterval(this.heartbeat);
        this.heartbeat = undefined;
        return;
      }
      for (const stream of all) this.write(stream, ':\n\n');
      // Without the listener nothing is heard: read instead on every beat until it is back.
      if (!this.listener.isListening) this.catchUp();
      // The streams still open after the writes: a dropped one's lease is not renewed.
      void this.renew(this.openStreams());
    }, this.heartbeatMs);
  }

  /**
   * Renews the streams' leases; ends those whose user's tokens were revoked since they opened, and those
   * whose row is gone (replaced by a new stream on their ticket).
   */
  private async renew(streams: OpenStream[]): Promise<void> {
    try {
      const alive = await this.streams.renew(
        streams.map((stream) => stream.id),
        STREAM_LEASE_MS,
      );
      for (const stream of streams) if (!alive.has(stream.id)) this.end(stream);
    } catch (error) {
      this.logger.warn({ err: error }, 'Could not renew the live inbox streams');
    }
  }

  private openStreams(): OpenStream[] {
    return [...this.byUser.values()].flatMap((streams) => [...streams]);
  }

  /** Ends the stream as a stream ends (the client may reconnect), and stops counting it at once. */
  private end(stream: OpenStream): void {
    stream.response.end();
    this.remove(stream);
  }

  private add(stream: OpenStream): void {
    const streams = this.byUser.get(stream.userId) ?? new Set<OpenStream>();
    streams.add(stream);
    this.byUser.set(stream.userId, streams);
  }

  private remove(stream: OpenStream): void {
    const streams = this.byUser.get(stream.userId);
    if (!streams?.delete(stream)) return;
    if (streams.size === 0) this.byUser.delete(stream.userId);
    void this.streams.close([stream.id]).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'Could not remove a closed live inbox stream');
    });
  }
}
