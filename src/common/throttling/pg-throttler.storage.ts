import { ThrottlerStorage } from '@nestjs/throttler';
import { DataSource } from 'typeorm';

type ThrottlerRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

interface HitRow {
  hits: number;
  expires_in: number;
  blocked_for: number | null;
}

// Expressions over the stored row (`t`), as seen before this hit. BLOCKED is never null: for a key never
// blocked (blocked_until null) a null BLOCKED would make `NOT BLOCKED AND NEW_WINDOW` null, so its ended
// window would never be renewed and every later hit would count as the first.
const BLOCKED = `coalesce(t.blocked_until > now()::timestamptz(3), false)`;
const NEW_WINDOW = `(t.window_ends_at <= now()::timestamptz(3) OR t.blocked_until IS NOT NULL)`;
const HITS_AFTER = `CASE WHEN ${BLOCKED} THEN t.hits WHEN ${NEW_WINDOW} THEN 1 ELSE t.hits + 1 END`;

/**
 * Throttler counters in PostgreSQL, shared by all instances. A fixed window of `ttl` per key; the hit that
 * exceeds `limit` blocks the key for `blockDuration`; hits while blocked are not counted; after the block a
 * new window starts. One atomic upsert per hit decides everything.
 */
export class PgThrottlerStorage implements ThrottlerStorage {
  constructor(private readonly dataSource: DataSource) {}

  async increment(key: string, ttl: number, limit: number, blockDuration: number): Promise<ThrottlerRecord> {
    const [row]: HitRow[] = await this.dataSource.query(
      `INSERT INTO throttler_hits AS t (key, hits, window_ends_at, blocked_until)
       VALUES ($1, 1, now()::timestamptz(3) + $2::float8 * interval '1 millisecond',
               CASE WHEN 1 > $3::int THEN now()::timestamptz(3) + $4::float8 * interval '1 millisecond' END)
       ON CONFLICT (key) DO UPDATE SET
         hits = ${HITS_AFTER},
         window_ends_at = CASE WHEN NOT ${BLOCKED} AND ${NEW_WINDOW} THEN EXCLUDED.window_ends_at
                               ELSE t.window_ends_at END,
         blocked_until = CASE WHEN ${BLOCKED} THEN t.blocked_until
                              WHEN ${HITS_AFTER} > $3::int THEN now()::timestamptz(3) + $4::float8 * interval '1 millisecond' END
       RETURNING hits,
         ceil(extract(epoch FROM window_ends_at - now()::timestamptz(3)))::int AS expires_in,
         ceil(extract(epoch FROM blocked_until - now()::timestamptz(3)))::int AS blocked_for`,
      [key, ttl, limit, blockDuration],
    );
    const blockedFor = row.blocked_for ?? 0;
    return {
      totalHits: row.hits,
      timeToExpire: Math.max(0, row.expires_in),
      isBlocked: blockedFor > 0,
      timeToBlockExpire: Math.max(0, blockedFor),
    };
  }
}

/** Removes the counters of finished windows and blocks (the hourly clean-up); answers how many. */
export async function deleteFinishedThrottlingWindows(dataSource: DataSource): Promise<number> {
  const [{ count }]: { count: number }[] = await dataSource.query(
    `WITH finished AS (
       DELETE FROM throttler_hits WHERE window_ends_at < now()::timestamptz(3) AND (blocked_until IS NULL OR blocked_until < now()::timestamptz(3))
       RETURNING 1
     )
     SELECT count(*)::int AS count FROM finished`,
  );
  return count;
}
