import { Injectable, Module } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { Db } from './sql';

declare const inTransaction: unique symbol;

/**
 * The EntityManager of a transaction in progress. Only `Transactions.run` makes one, so a method that takes a
 * `Tx` (a lock held until commit, statements that must commit together) cannot be handed the data source, on
 * which each statement commits alone and a lock is released as soon as it is taken. A `Tx` is a `Db`: every
 * statement helper of `sql.ts` and the entity API take it.
 */
export type Tx = EntityManager & { readonly [inTransaction]: true };

const stepBeforeCommit = new AsyncLocalStorage<(tx: Tx) => Promise<void>>();

/**
 * Runs `work` so that every transaction it opens through `Transactions.run` (awaited or not) runs `step` last,
 * just before its commit; a `step` that throws rolls the transaction back. This is how a request's
 * `Idempotency-Key` commits with the write it stands for, in the write's own transaction.
 */
export function withStepBeforeEachCommit<T>(step: (tx: Tx) => Promise<void>, work: () => T): T {
  return stepBeforeCommit.run(step, work);
}

/** Runs work in a transaction, or statements that commit one by one. Services inject this, not the data source. */
@Injectable()
export class Transactions {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Commits when `work` resolves (after the step of `withStepBeforeEachCommit`), rolls back when it rejects. */
  run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      const tx = manager as Tx;
      const result = await work(tx);
      await stepBeforeCommit.getStore()?.(tx);
      return result;
    });
  }

  /**
   * A transaction beside the request's own work, without the step of `withStepBeforeEachCommit`: one that an
   * answer refusing the request also commits (an upload's quota reservation) does not stand for its write.
   */
  runAside<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.dataSource.transaction((manager) => work(manager as Tx));
  }

  /** Where a read or a one-statement write runs outside a transaction (a pooled connection per statement). */
  get autocommit(): Db {
    return this.dataSource;
  }
}

/** `Transactions` for the modules that import it (TypeORM's data source is there app-wide). */
@Module({ providers: [Transactions], exports: [Transactions] })
export class TransactionsModule {}
