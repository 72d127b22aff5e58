import { randomBytes } from 'node:crypto';
import { Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { Piscina } from 'piscina';
import { PASSWORD_MAX_BYTES } from '../common/validation/validators';
import { createWorkerPool } from '../common/workers/worker-pool';
import { type AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';
import type { HashTask, VerifyTask } from './password-hash.worker';

export const BCRYPT_COST = 10;
/** An idle thread exits after this long; the next hash starts a new one (tens of milliseconds). */
const IDLE_THREAD_EXIT_MS = 60_000;
/**
 * Added to the nice value of the pool's threads (Linux: per thread, through piscina's optional `@napi-rs/nice`),
 * so the event loop and PostgreSQL come first and logins take the CPU they leave.
 */
const NICE_INCREMENT = 10;

/**
 * bcrypt in a pool of at most PASSWORD_HASH_CONCURRENCY worker threads (default: the CPUs less one) that run
 * below normal priority (`password-hash.worker.ts`); further hashes wait in the pool's queue, in order. A burst
 * of logins (about 50 ms of CPU each) on libuv's pool occupied every core, and all other requests slowed down
 * with it; bounded and deprioritized, it uses what the other requests leave.
 */
@Injectable()
export class PasswordHasher implements OnModuleInit, OnApplicationShutdown {
  /** Compared against when the e-mail is unknown, so a failed login takes the same time either way. */
  private dummyHash: string;
  private readonly pool: Piscina<HashTask | VerifyTask, string | boolean>;

  constructor(@InjectConfig() config: AppConfig) {
    this.pool = createWorkerPool(__dirname, 'password-hash.worker', {
      minThreads: 0,
      maxThreads: config.passwordHashConcurrency,
      idleTimeout: IDLE_THREAD_EXIT_MS,
      niceIncrement: NICE_INCREMENT,
      // The worker's handler when a run names none (piscina loads it as each thread starts).
      name: 'verify',
    });
  }

  async onModuleInit(): Promise<void> {
    this.dummyHash = await this.hash(randomBytes(16).toString('hex'));
  }

  async hash(password: string): Promise<string> {
    return (await this.pool.run({ password, cost: BCRYPT_COST }, { name: 'hash' })) as string;
  }

  /**
   * `passwordHash` null means "no such user": the work is done anyway and the answer is false. So is the
   * answer for a password over 72 bytes: bcrypt compares only the first 72, and no stored password is longer,
   * so a longer one is never the right one even when it begins with it.
   */
  async verify(password: string, passwordHash: string | null): Promise<boolean> {
    const task: VerifyTask = { password, passwordHash: passwordHash ?? this.dummyHash };
    const matches = (await this.pool.run(task)) as boolean;
    return matches && passwordHash !== null && Buffer.byteLength(password, 'utf8') <= PASSWORD_MAX_BYTES;
  }

  /** After the HTTP server closed: hashes still running finish, then the threads exit. */
  onApplicationShutdown(): Promise<void> {
    return this.pool.close();
  }
}
