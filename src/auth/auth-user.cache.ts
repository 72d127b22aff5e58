import { Injectable, Module, OnModuleInit } from '@nestjs/common';
import { AuthUser } from '../common/decorators/current-user.decorator';
import { UserChanges, UserChangesModule } from '../common/events/user-changes';
import { type AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';
import {
  PG_LISTENER_NAME,
  PgListener,
  PgListenerModule,
  USER_CHANGED_CHANNEL,
} from '../database/pg-listener';
import { KeptToken } from '../users/users.repository';

/** The cache listens on the instance's shared listener connection. */
export const AUTH_USER_LISTENER_NAME = PG_LISTENER_NAME;
const MAX_ENTRIES = 10_000;

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
 * PostgreSQL decides when an entry goes: the instance's listener (`PgListener`) LISTENs on USER_CHANGED_CHANNEL
 * and every notification drops that user. While that connection is down nothing is cached (every lookup
 * reads the database) because notifications sent meanwhile are lost; the listener's heartbeat finds a
 * silently dead connection. The TTL (AUTH_CACHE_TTL_MS) is a safety net.
 */
@Injectable()
export class AuthUserCache implements OnModuleInit {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  /**
   * Moves on every invalidation and every change of the listener's state. A read stores its result only when
   * it has not moved since the read began: otherwise the row may predate a commit whose notification was
   * already handled, and nothing would remove it.
   */
  private generation = 0;
  private listening = false;

  constructor(
    @InjectConfig() config: AppConfig,
    private readonly listener: PgListener,
  ) {
    this.ttlMs = config.authCacheTtlMs;
  }

  async onModuleInit(): Promise<void> {
    if (this.ttlMs <= 0) return;
    await this.listener.subscribe(USER_CHANGED_CHANNEL, {
      message: (userId) => this.evict(userId),
      // The listener logs its outages; meanwhile nothing is cached.
      listening: (listening) => {
        this.listening = listening;
        this.entries.clear();
        this.generation += 1;
      },
    });
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
}

/** Also drops the users that other modules changed (profile edits), without their knowing of the cache. */
@Module({
  imports: [UserChangesModule, PgListenerModule],
  providers: [AuthUserCache],
  exports: [AuthUserCache],
})
export class AuthUserCacheModule {
  constructor(changes: UserChanges, cache: AuthUserCache) {
    changes.subscribe((userId) => cache.evict(userId));
  }
}
