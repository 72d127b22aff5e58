import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * A keyed request (one that claimed an `Idempotency-Key`) as its statements see it: `step` runs last in each
 * of its transactions (marking the key as committed with the write), and `strayWrite` is told of a write
 * that runs outside such a transaction, where the key cannot commit with it.
 */
export interface KeyedWork<Step> {
  step: Step;
  strayWrite(statement: string): void;
}

/** The keyed request the current code runs for; none outside a keyed request. */
export const keyedWork = new AsyncLocalStorage<KeyedWork<unknown>>();

/**
 * The connection of the transaction the current code runs in: one of `Transactions.run` (whose commit carries
 * the key's mark) or of `Transactions.runAside` (a transaction declared independent of the key).
 */
const transactionConnection = new AsyncLocalStorage<object>();

/** Runs `work` as the work of the transaction on `connection`. */
export const inTransactionOn = <T>(connection: object, work: () => T): T =>
  transactionConnection.run(connection, work);

/**
 * Runs `work` outside any keyed request: the key's own bookkeeping (keeping the answer, releasing the key),
 * which must not be mistaken for the request's write.
 */
export const outsideKeyedWork = <T>(work: () => T): T => keyedWork.exit(work);

/**
 * Statements that change data: DML, DDL, COPY, CALL, and a WITH with a writing clause (a row lock, `FOR
 * UPDATE`, is no write). A `SELECT` of a function with side effects (`pg_notify`, `nextval`) is not
 * recognised; the service runs none on a keyed request's autocommit path.
 */
const WRITE = /^\s*(?:insert|update|delete|merge|truncate|copy|call|create|alter|drop)\b/i;
const WITH = /^\s*with\b/i;
const ROW_LOCK = /\bfor\s+(?:no\s+key\s+)?update\b/gi;
const WRITING_CLAUSE = /\b(?:insert\s+into|update|delete\s+from|merge\s+into)\b/i;

export const isWrite = (statement: string): boolean =>
  WRITE.test(statement) || (WITH.test(statement) && WRITING_CLAUSE.test(statement.replace(ROW_LOCK, '')));

/**
 * Called by the app's database clients (`FailFastClient`) with each statement they send: a write of a keyed
 * request that runs outside a transaction of its own connection (autocommit, or another connection than the
 * transaction the code runs in) is a write the key does not commit with, which a retry would run again.
 */
export function checkKeyedWrite(connection: object, statement: string): void {
  const keyed = keyedWork.getStore();
  if (!keyed || transactionConnection.getStore() === connection || !isWrite(statement)) return;
  keyed.strayWrite(statement);
}
