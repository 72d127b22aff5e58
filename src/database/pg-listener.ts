import { Injectable, Logger, Module, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { type AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';
import { dataSourceUrl, sessionUrl } from './typeorm-options';
import { endWithin, withOwnSocket } from './session-client';

/**
 * Notified by a trigger on `users` (migration AuthUserChangeNotify) with the id of a user whose row a login
 * token depends on changed (token version, activity, e-mail, time zone) or who was deleted.
 */
export const USER_CHANGED_CHANNEL = 'auth_user_changed';
/** How the listener's connection shows in `pg_stat_activity`. */
export const PG_LISTENER_NAME = 'classroom-task-service-listener';
const RECONNECT_FIRST_DELAY_MS = 100;
const RECONNECT_MAX_DELAY_MS = 5_000;
/** PostgreSQL channel names are identifiers; ours are plain lower-case words. */
const CHANNEL_NAME = /^[a-z_]+$/;

/** What a subscriber of a channel is told. */
export interface ChannelSubscriber {
  /** A notification on the channel, with its payload. */
  message(payload: string): void;
  /**
   * The connection listens (true) or was lost (false). Notifications sent while it is lost are gone: a
   * subscriber that relies on them catches up when it listens again.
   */
  listening(listening: boolean): void;
}

/**
 * The instance's one PostgreSQL LISTEN connection, shared by every module that reacts to notifications (the
 * token-user cache, the live inbox), so that an instance holds one connection for them whatever their
 * number. It opens on the first subscription, reconnects with back-off when lost, and a heartbeat query
 * every AUTH_LISTENER_HEARTBEAT_MS must be answered within that time, or the connection counts as lost (a
 * connection can die silently: failover, network partition). A beat is sent one period after the last answer,
 * so a silent connection is noticed within two periods (2 s at the default).
 */
@Injectable()
export class PgListener implements OnModuleDestroy {
  private readonly logger = new Logger(PgListener.name);
  private readonly subscribers = new Map<string, ChannelSubscriber[]>();
  private readonly heartbeatMs: number;
  private readonly databaseUrl: string;
  private readonly database: AppConfig['database'];
  /** The client while it connects or listens; events of any other client are stale. */
  private client: Client | null = null;
  private listening = false;
  private closing = false;
  /** Resolves when the connection under way first listens or fails. */
  private connecting: Promise<void> | null = null;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private reconnectDelayMs = RECONNECT_FIRST_DELAY_MS;
  private outageReported = false;

  constructor(@InjectConfig() config: AppConfig, @InjectDataSource() dataSource: DataSource) {
    this.heartbeatMs = config.authListenerHeartbeatMs;
    this.database = config.database;
    // LISTEN is a session's: through a transaction-mode pooler its notifications would never arrive.
    this.databaseUrl = sessionUrl(config, dataSourceUrl(dataSource));
  }

  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.lose();
    if (client) await endWithin(client);
  }

  get isListening(): boolean {
    return this.listening;
  }

  /**
   * Adds `subscriber` to `channel`; resolves once the connection listens on it, or once a first attempt
   * failed (it then reconnects in the background and tells the subscriber when it listens).
   */
  async subscribe(channel: string, subscriber: ChannelSubscriber): Promise<void> {
    if (!CHANNEL_NAME.test(channel)) throw new Error(`Invalid channel name ${channel}`);
    const known = this.subscribers.get(channel);
    this.subscribers.set(channel, [...(known ?? []), subscriber]);
    if (this.closing) return;
    if (this.listening && !known) {
      await this.client!.query(`LISTEN ${channel}`).catch((error: unknown) => this.lost(this.client!, error));
    } else if (!this.client) {
      this.connecting = this.connect();
    }
    await this.connecting;
    if (this.listening) subscriber.listening(true);
  }

  private async connect(): Promise<void> {
    // A subscription may start the connection while a reconnection waits: one connection only.
    clearTimeout(this.reconnectTimer);
    const client = withOwnSocket((config) => new Client(config), {
      connectionString: this.databaseUrl,
      application_name: PG_LISTENER_NAME,
      connectionTimeoutMillis: this.database.connectTimeoutMs,
      keepAlive: true,
      keepAliveInitialDelayMillis: this.database.keepAliveMs,
      // Its statements are LISTEN and the heartbeat: each must be answered within a heartbeat period.
      query_timeout: this.heartbeatMs,
    });
    this.client = client;
    client.on('notification', (message) => {
      if (this.client !== client) return;
      for (const subscriber of this.subscribers.get(message.channel) ?? [])
        subscriber.message(message.payload ?? '');
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    try {
      await client.connect();
      for (const channel of this.subscribers.keys()) await client.query(`LISTEN ${channel}`);
    } catch (error) {
      this.lost(client, error);
      return;
    }
    if (this.client !== client) return;
    this.listening = true;
    this.reconnectDelayMs = RECONNECT_FIRST_DELAY_MS;
    if (this.outageReported) this.logger.log('Listening for database notifications again');
    this.outageReported = false;
    this.scheduleHeartbeat(client);
    this.tellAll(true);
  }

  /** A query the connection must answer in time, or it counts as lost. */
  private scheduleHeartbeat(client: Client): void {
    this.heartbeatTimer = setTimeout(() => {
      if (this.client !== client) return;
      client.query('SELECT 1').then(
        () => this.scheduleHeartbeat(client),
        (error: unknown) => this.lost(client, error),
      );
    }, this.heartbeatMs);
  }

  /** The connection failed or ended: subscribers hear of it, and a new one is tried after a delay. */
  private lost(client: Client, error: unknown): void {
    if (this.client !== client) return;
    this.lose();
    void endWithin(client);
    if (this.closing) return;
    if (!this.outageReported) {
      this.logger.warn({ err: error }, 'Lost the database notification listener; reconnecting');
      this.outageReported = true;
    }
    this.reconnectTimer = setTimeout(() => {
      this.connecting = this.connect();
    }, this.reconnectDelayMs);
    this.reconnectDelayMs = Math.min(this.reconnectDelayMs * 2, RECONNECT_MAX_DELAY_MS);
  }

  private lose(): void {
    clearTimeout(this.heartbeatTimer);
    const wasListening = this.listening;
    this.client = null;
    this.listening = false;
    // Told even when it never listened: a subscriber may have counted on the connection under way.
    if (wasListening || this.closing) this.tellAll(false);
  }

  private tellAll(listening: boolean): void {
    for (const subscribers of this.subscribers.values()) {
      for (const subscriber of subscribers) subscriber.listening(listening);
    }
  }
}

/** Imported by each module that listens; Nest builds one PgListener per application. */
@Module({ providers: [PgListener], exports: [PgListener] })
export class PgListenerModule {}
