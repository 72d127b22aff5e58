import { Injectable, Logger, Module, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Client, QueryConfig } from 'pg';
import { DataSource } from 'typeorm';
import { PostgresConnectionOptions } from 'typeorm/driver/postgres/PostgresConnectionOptions';
import { AuthUser } from '../common/decorators/current-user.decorator';
import { UserChanges, UserChangesModule } from '../common/events/user-changes';
import { AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';
import { KeptToken } from '../users/users.repository';

/** Notified by a trigger on `users` (migration AuthUserChangeNotify) with the id of a changed or deleted user. */
export const AUTH_USER_CHANNEL = 'auth_user_changed';
/** How the listener's connection shows in `pg_stat_activity`. */
export const AUTH_USER_LISTENER_NAME = 'classroom-task-service-auth-listener';
const MAX_ENTRIES = 10_000;
const RECONNECT_FIRST_DELAY_MS = 100;
const RECONNECT_MAX_DELAY_MS = 5_000;
/** How long a connection being dropped may take to say goodbye before its socket is simply closed. */
const END_GRACE_MS = 1_000;

/**
 * An active user as a login token needs it, with the token version read along, and the one token of an older
 * version that the last password change kept valid.
 */
export interface TokenUser {
  tokenVersion: number;
  keptToken: KeptToken | null;
  user: AuthUser;
}

interface Entry extends TokenUser {
  cachedAt: number;
}

/**
 * The users behind login tokens, by id, so that most authenticated requests need no database round trip.
 * PostgreSQL decides when an entry goes: a dedicated connection LISTENs on AUTH_USER_CHANNEL and every
 * notification drops that user. While that connection is down nothing is cached (every lookup reads the
 * database) because notifications sent meanwhile are lost. A connection can also die silently (failover,
 * network partition): a heartbeat query every AUTH_LISTENER_HEARTBEAT_MS must be answered within that time,
 * or the connection counts as lost. The TTL (AUTH_CACHE_TTL_MS) is a safety net.
 */
@Injectable()
export class AuthUserCache implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(AuthUserCache.name);
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly heartbeatMs: number;
  private readonly databaseUrl: string;
  private readonly database: AppConfig['database'];
  /**
   * Moves on every invalidation and every change of the listener's state. A read stores its result only when
   * it has not moved since the read began: otherwise the row may predate a commit whose notification was
   * already handled, and nothing would remove it.
   */
  private generation = 0;
  /** The listener's client while it connects or listens; events of any other client are stale. */
  private client: Client | null = null;
  private listening = false;
  private closing = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private reconnectDelayMs = RECONNECT_FIRST_DELAY_MS;
  private outageReported = false;

  constructor(@InjectConfig() config: AppConfig, @InjectDataSource() dataSource: DataSource) {
    this.ttlMs = config.authCacheTtlMs;
    this.heartbeatMs = config.authListenerHeartbeatMs;
    this.database = config.database;
    this.databaseUrl = (dataSource.options as PostgresConnectionOptions).url!;
  }

  async onModuleInit(): Promise<void> {
    if (this.ttlMs > 0) await this.listen();
  }

  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.stopCaching();
    if (client) await endWithin(client, END_GRACE_MS);
  }

  /** The cached user, if any and not expired. */
  get(userId: string): TokenUser | undefined {
    const entry = this.entries.get(userId);
    if (entry && Date.now() - entry.cachedAt < this.ttlMs) return entry;
    this.entries.delete(userId);
    return undefined;
  }

  /** Reads the user through `read` and caches the result unless an invalidation came in meanwhile. */
  async load(userId: string, read: () => Promise<TokenUser | undefined>): Promise<TokenUser | undefined> {
    const generation = this.generation;
    const found = await read();
    // Whatever is cached for the user is older than this read.
    this.entries.delete(userId);
    if (found && this.listening && generation === this.generation) {
      this.entries.set(userId, { ...found, user: Object.freeze(found.user), cachedAt: Date.now() });
      // Map order is insertion order: the first key is the oldest entry.
      if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    }
    return found;
  }

  /**
   * Drops the user. Writers of this instance call it right after their commit, so that its next request
   * sees the change without waiting for the notification.
   */
  evict(userId: string): void {
    this.entries.delete(userId);
    this.generation += 1;
  }

  private async listen(): Promise<void> {
    const client = new Client({
      connectionString: this.databaseUrl,
      application_name: AUTH_USER_LISTENER_NAME,
      connectionTimeoutMillis: this.database.connectTimeoutMs,
      keepAlive: true,
      keepAliveInitialDelayMillis: this.database.keepAliveMs,
    });
    this.client = client;
    client.on('notification', (message) => {
      if (this.client === client && message.payload) this.evict(message.payload);
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    try {
      await client.connect();
      await client.query(`LISTEN ${AUTH_USER_CHANNEL}`);
    } catch (error) {
      this.lost(client, error);
      return;
    }
    if (this.client !== client) return;
    this.listening = true;
    this.generation += 1;
    this.reconnectDelayMs = RECONNECT_FIRST_DELAY_MS;
    if (this.outageReported) this.logger.log('Token-user cache listens for changes again');
    this.outageReported = false;
    this.scheduleHeartbeat(client);
  }

  /** A query the listener's connection must answer in time, or it counts as lost. */
  private scheduleHeartbeat(client: Client): void {
    this.heartbeatTimer = setTimeout(() => {
      if (this.client !== client) return;
      const beat = { text: 'SELECT 1', query_timeout: this.heartbeatMs } as QueryConfig;
      client.query(beat).then(
        () => this.scheduleHeartbeat(client),
        (error: unknown) => this.lost(client, error),
      );
    }, this.heartbeatMs);
  }

  /** The listener's connection failed or ended: no caching until a new one listens. */
  private lost(client: Client, error: unknown): void {
    if (this.client !== client) return;
    this.stopCaching();
    void endWithin(client, END_GRACE_MS);
    if (this.closing) return;
    if (!this.outageReported) {
      this.logger.warn(
        { err: error },
        'Token-user cache lost its change listener; every request reads the user until it reconnects',
      );
      this.outageReported = true;
    }
    this.reconnectTimer = setTimeout(() => void this.listen(), this.reconnectDelayMs);
    this.reconnectDelayMs = Math.min(this.reconnectDelayMs * 2, RECONNECT_MAX_DELAY_MS);
  }

  private stopCaching(): void {
    clearTimeout(this.heartbeatTimer);
    this.client = null;
    this.listening = false;
    this.entries.clear();
    this.generation += 1;
  }
}

/** Ends `client` politely, or closes its socket when the other side does not answer within `graceMs`. */
async function endWithin(client: Client, graceMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
  await Promise.race([client.end().catch(() => undefined), late]);
  clearTimeout(timer);
  client.connection.stream.destroy();
}

/** Also drops the users that other modules changed (profile edits), without their knowing of the cache. */
@Module({ imports: [UserChangesModule], providers: [AuthUserCache], exports: [AuthUserCache] })
export class AuthUserCacheModule {
  constructor(changes: UserChanges, cache: AuthUserCache) {
    changes.subscribe((userId) => cache.evict(userId));
  }
}
