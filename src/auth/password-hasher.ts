import { randomBytes } from 'node:crypto';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { compare, hash } from 'bcrypt';
import { AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';

export const BCRYPT_COST = 10;

/**
 * bcrypt through its asynchronous API, which runs on libuv's thread pool and keeps the event loop free.
 * At most PASSWORD_HASH_CONCURRENCY hashes run at once (default: the CPUs less one); further ones wait here
 * in order. Without the bound a burst of logins (about 50 ms of CPU each) occupied every pool thread and
 * every core, and all other requests slowed down with them.
 */
@Injectable()
export class PasswordHasher implements OnModuleInit {
  /** Compared against when the e-mail is unknown, so a failed login takes the same time either way. */
  private dummyHash: string;
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(@InjectConfig() private readonly config: AppConfig) {}

  async onModuleInit(): Promise<void> {
    this.dummyHash = await hash(randomBytes(16).toString('hex'), BCRYPT_COST);
  }

  hash(password: string): Promise<string> {
    return this.inTurn(() => hash(password, BCRYPT_COST));
  }

  /** `passwordHash` null means "no such user": the work is done anyway and the answer is false. */
  async verify(password: string, passwordHash: string | null): Promise<boolean> {
    const matches = await this.inTurn(() => compare(password, passwordHash ?? this.dummyHash));
    return matches && passwordHash !== null;
  }

  private async inTurn<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < this.config.passwordHashConcurrency) this.running += 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await work();
    } finally {
      // The slot passes straight to the next waiter, if any.
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
