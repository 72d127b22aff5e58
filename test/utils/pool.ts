import { TestApp } from './test-app';

/**
 * Whether the app's pool (TypeORM's) hands out all its DATABASE_POOL_SIZE connections at once within
 * `withinMs`, i.e. nothing else holds one: each query runner checks a pooled connection out (public API,
 * where the pool's own counters are not). A connection held elsewhere makes the last checkout wait, at most
 * DATABASE_CONNECT_TIMEOUT_MS. Every connection goes back before the answer.
 */
export async function poolIsFree(ctx: TestApp, withinMs = 1_000): Promise<boolean> {
  const runners = Array.from({ length: ctx.config.database.poolSize }, () => ctx.db.createQueryRunner());
  const started = Date.now();
  const checkouts = await Promise.allSettled(runners.map((runner) => runner.connect()));
  const took = Date.now() - started;
  await Promise.all(runners.map((runner) => runner.release()));
  return took <= withinMs && checkouts.every((checkout) => checkout.status === 'fulfilled');
}
