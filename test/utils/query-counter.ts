import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';
import { Client } from 'pg';
import { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { TestApp } from './test-app';

interface Recording {
  statements: string[];
}

type QueryFn = (this: Client, ...args: unknown[]) => unknown;

export interface QueryCounter {
  /**
   * Runs `work` (HTTP requests through `ctx.http`) and returns the SQL statements the app sent while serving
   * the requests started during it, BEGIN/COMMIT included. Queries of background jobs are not counted.
   */
  record(work: () => Promise<unknown>): Promise<string[]>;
  /** Restores the pg client and the HTTP server; call in afterAll. */
  detach(): void;
}

/** The pool's own client class: the app's (FailFastClient) overrides `query`, so pg's prototype is not enough. */
function clientPrototype(ctx: TestApp): { query: QueryFn } {
  const driver = ctx.db.driver as PostgresDriver;
  const clientClass = ((driver.master as { Client?: typeof Client }).Client ??
    driver.postgres.Client) as typeof Client;
  return clientClass.prototype;
}

const statementText = ([config]: unknown[]): string =>
  typeof config === 'string' ? config : String((config as { text?: string }).text);

/**
 * The SQL statements every client of the process sends while `work` runs, background jobs included: for
 * measuring a job called directly while the apps' own schedules are idle.
 */
export async function statementsDuring(ctx: TestApp, work: () => Promise<unknown>): Promise<string[]> {
  const prototype = clientPrototype(ctx);
  const original = prototype.query;
  const statements: string[] = [];
  prototype.query = function (this: Client, ...args: unknown[]): unknown {
    statements.push(statementText(args));
    return original.apply(this, args);
  };
  try {
    await work();
  } finally {
    prototype.query = original;
  }
  return statements;
}

/**
 * Counts statements per HTTP request: every request enters an async context, and the pg client's `query`
 * records into the context it is called from. Scheduler or delivery queries running at the same time have
 * no such context, so counts stay exact even while background jobs run.
 */
export function attachQueryCounter(ctx: TestApp): QueryCounter {
  const scope = new AsyncLocalStorage<Recording | null>();
  let active: Recording | null = null;

  const server = ctx.app.getHttpServer();
  // Prepended, so the rest of this request's handling (Express, Nest, TypeORM) runs inside the context.
  const onRequest = (_request: IncomingMessage): void => scope.enterWith(active);
  server.prependListener('request', onRequest);

  const prototype = clientPrototype(ctx);
  const original = prototype.query;
  prototype.query = function (this: Client, ...args: unknown[]): unknown {
    const recording = scope.getStore();
    if (recording) recording.statements.push(statementText(args));
    return original.apply(this, args);
  };

  return {
    async record(work) {
      const recording: Recording = { statements: [] };
      active = recording;
      try {
        await work();
      } finally {
        active = null;
      }
      return recording.statements;
    },
    detach() {
      prototype.query = original;
      server.removeListener('request', onRequest);
    },
  };
}
