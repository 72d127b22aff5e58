import { randomBytes } from 'node:crypto';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { compare, hash } from 'bcrypt';

export const BCRYPT_COST = 10;

/**
 * bcrypt through its asynchronous API, which runs on libuv's thread pool and keeps the event loop free.
 */
@Injectable()
export class PasswordHasher implements OnModuleInit {
  /** Compared against when the e-mail is unknown, so a failed login takes the same time either way. */
  private dummyHash: string;

  async onModuleInit(): Promise<void> {
    this.dummyHash = await hash(randomBytes(16).toString('hex'), BCRYPT_COST);
  }

  hash(password: string): Promise<string> {
    return hash(password, BCRYPT_COST);
  }

  /** `passwordHash` null means "no such user": the work is done anyway and the answer is false. */
  async verify(password: string, passwordHash: string | null): Promise<boolean> {
    const matches = await compare(password, passwordHash ?? this.dummyHash);
    return matches && passwordHash !== null;
  }
}
