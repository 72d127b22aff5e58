import { join } from 'node:path';
import { Piscina } from 'piscina';

/** Piscina's constructor options (its `Options` type is not exported). */
type PoolOptions = NonNullable<ConstructorParameters<typeof Piscina>[0]>;

/**
 * Under ts-jest or ts-node the service runs from its TypeScript sources, and a worker file beside this one is
 * TypeScript too; a worker thread does not inherit the parent's TypeScript hook, so it registers ts-node
 * (transpile only) itself. Compiled, everything is .js.
 */
const RUNNING_FROM_SOURCE = __filename.endsWith('.ts');

/** A piscina pool running the worker module `name` (without extension) of `directory`. */
export function createWorkerPool<Task, Result>(
  directory: string,
  name: string,
  options: Omit<PoolOptions, 'filename' | 'execArgv'>,
): Piscina<Task, Result> {
  return new Piscina<Task, Result>({
    filename: join(directory, `${name}.${RUNNING_FROM_SOURCE ? 'ts' : 'js'}`),
    execArgv: RUNNING_FROM_SOURCE ? ['--require', 'ts-node/register/transpile-only'] : [],
    ...options,
  });
}
