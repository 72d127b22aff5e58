import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** Node's arguments before a TypeScript file of the checkout, to run it as the sources are. */
export const FROM_SOURCES = ['-r', 'ts-node/register/transpile-only'];

/**
 * Exactly `env`, plus what Node and ts-node need to run the sources from any working directory (so that
 * nothing of the test's own environment decides what the process sees). NODE_PATH: the worker threads
 * register ts-node by name, from a working directory outside the checkout.
 */
export function sourcesEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    NODE_PATH: join(ROOT, 'node_modules'),
    TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
    ...env,
  };
}
