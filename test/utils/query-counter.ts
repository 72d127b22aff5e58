import { AsyncLocalStorage } from 'node:async_hooks';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { STATEMENTS_CHANNEL } from '../../src/database/fail-fast-client';
import { TestApp } from './test-app';

interface Recording {
  statements: string[];
}

export interface QueryCounter {
  /**
   * Runs `work` (HTTP requests through `ctx.http`) and returns the SQL statements the app sent while serving
   * the requests started during it, BEGIN/COMMIT included. Queries of background jobs are not counted.
   */
  record(work: () => Promise<unknown>): Promise<string[]>;
  /** Stops listening to the statements and the HTTP server; call in afterAll. */
  detach(): void;
}

const statementText = (message: unknown): string => (message as { text: string }).text;

const jobScope = new AsyncLocalStorage<string[]>();

/**
 * The SQL statements `work` sends, for measuring a job called directly. Statements are kept only when sent
 * from `work`'s own async context, so a background worker that wakes meanwhile (a NOTIFY, a timer) is not
 * counted.
 */
export async function statementsDuring(work: () => Promise<unknown>): Promise<string[]> {
  const statements: string[] = [];
  const onStatement = (message: unknown): void => {
    if (jobScope.getStore() === statements) statements.push(statementText(message));
  };
  subscribe(STATEMENTS_CHANNEL, onStatement);
  try {
    await jobScope.run(statements, work);
  } finally {
    unsubscribe(STATEMENTS_CHANNEL, onStatement);
  }
  return statements;
}

/**
 * Counts statements per HTTP request: every request enters an async context, and the app's connections
 * publish each statement (STATEMENTS_CHANNEL) in the context it is sent from. Scheduler or delivery queries
 * running at the same time have no such context, so counts stay exact even while background jobs run.
 */
export function attachQueryCounter(ctx: TestApp): QueryCounter {
  const scope = new AsyncLocalStorage<Recording | null>();
  let active: Recording | null = null;

  const server = ctx.app.getHttpServer();
  // Prepended, so the rest of this request's handling (Express, Nest, TypeORM) runs inside the context.
  const onRequest = (_request: IncomingMessage): void => scope.enterWith(active);
  server.prependListener('request', onRequest);

  const onStatement = (message: unknown): void => {
    scope.getStore()?.statements.push(statementText(message));
  };
  subscribe(STATEMENTS_CHANNEL, onStatement);

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
      unsubscribe(STATEMENTS_CHANNEL, onStatement);
      server.removeListener('request', onRequest);
    },
  };
}
