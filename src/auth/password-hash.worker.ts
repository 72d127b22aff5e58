import { compareSync, hashSync } from 'bcrypt';

/** bcrypt, synchronous: each call runs on the worker thread of `PasswordHasher`'s pool that took it. */
export interface HashTask {
  password: string;
  cost: number;
}

export interface VerifyTask {
  password: string;
  passwordHash: string;
}

export function hash({ password, cost }: HashTask): string {
  return hashSync(password, cost);
}

export function verify({ password, passwordHash }: VerifyTask): boolean {
  return compareSync(password, passwordHash);
}
