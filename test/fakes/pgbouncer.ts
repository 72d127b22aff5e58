/*
 * PgBouncer in transaction mode as a child process on a free port (`-u` an unprivileged account when the
 * tests run as root), in front of a PostgreSQL server. The bench starts it the same way: one implementation,
 * in plain JavaScript beside the bench.
 */
export { startPgBouncer } from '../../bench/lib/pgbouncer';
export type { PgBouncer, PgBouncerOptions } from '../../bench/lib/pgbouncer';
