import { readdirSync, readFileSync } from 'node:fs';
import { Piscina } from 'piscina';
import { AppConfig } from '../config/config';
import type { VerifyTask } from './password-hash.worker';
import { PasswordHasher } from './password-hasher';

/** Nice value of one thread of this process (Linux: /proc/self/task/<tid>/stat, field 19). */
function threadNiceValue(tid: string | number): number {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

function threadNiceValues(): number[] {
  return readdirSync('/proc/self/task').map(threadNiceValue);
}

describe('PasswordHasher', () => {
  let hasher: PasswordHasher;

  beforeAll(async () => {
    hasher = new PasswordHasher({ passwordHashConcurrency: 2 } as AppConfig);
    await hasher.onModuleInit();
  });
  afterAll(() => hasher.onApplicationShutdown());

  it('hashes with bcrypt and verifies', async () => {
    const hash = await hasher.hash('correct horse battery');
    expect(hash).toMatch(/^\$2b\$10\$/);
    expect(await hasher.verify('correct horse battery', hash)).toBe(true);
    expect(await hasher.verify('wrong horse battery', hash)).toBe(false);
  });

  it('answers false for an unknown user after doing the same work', async () => {
    // The work is what the pool's threads are given: a bcrypt comparison at the same cost as a real one.
    const run = jest.spyOn(Piscina.prototype, 'run');
    try {
      const hash = await hasher.hash('correct horse battery');
      run.mockClear();
      expect(await hasher.verify('correct horse battery', null)).toBe(false);
      expect(await hasher.verify('wrong horse battery', hash)).toBe(false);
      const [unknownUser, knownUser] = run.mock.calls.map(([task]) => task as VerifyTask);
      expect(run).toHaveBeenCalledTimes(2);
      expect(unknownUser.password).toBe('correct horse battery');
      expect(unknownUser.passwordHash.slice(0, 7)).toBe(knownUser.passwordHash.slice(0, 7));
      expect(unknownUser.passwordHash).toMatch(/^\$2b\$10\$.{53}$/);
    } finally {
      run.mockRestore();
    }
  });

  it('runs at most PASSWORD_HASH_CONCURRENCY threads, below normal priority', async () => {
    const lowered = 10;
    const hash = await hasher.hash('x');
    const niceDuring: number[][] = [];
    const verifications = Array.from({ length: 6 }, () => hasher.verify('x', hash));
    const sampler = setInterval(() => niceDuring.push(threadNiceValues()), 5);
    expect(await Promise.all(verifications)).toEqual(Array(6).fill(true));
    clearInterval(sampler);
    const loweredThreads = niceDuring.map((values) => values.filter((nice) => nice === lowered).length);
    expect(Math.max(...loweredThreads)).toBe(2);
    // The event loop's own thread (its id is the process id) keeps its priority.
    expect(threadNiceValue(process.pid)).toBe(0);
  });
});
