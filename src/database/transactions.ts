import { Injectable, Module } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { inTransactionOn, KeyedWork, keyedWork } from './keyed-writes';
import type { Db } from './sql';

declare const inTransaction: unique symbol;

/**
 * The EntityManager of a transaction in progress. Only `Transactions.run` makes one, so a method that takes a
 * `Tx` (a lock held until commit, statements that must commit together) cannot be handed the data source, on
 * which each statement commits alone and a lock is released as soon as it is taken. A `Tx` is a `Db`: every
 * statement helper of `sql.ts` and the entity API take it.
 */
export type Tx = EntityManager & { readonly [inTransaction]: true };

type CommitStep = (tx: Tx) => Promise<void>;

/**
 * Runs `work` as a keyed request: every transaction it opens through `Transactions.run` (awaited or not) runs
 * `step` last, just before its commit; a `step` that throws rolls the transaction back. This is how a
 * request's `Idempotency-Key` commits with the write it stands for, in the write's own transaction. A write
 * of `work` outside such a transaction (autocommit) could not carry the key: `strayWrite` is told of it
 * before it is sent, and throws to refuse it.
 */
export function withStepBeforeEachCommit<T>(
  step: CommitStep,
  strayWrite: (statement: string) => void,
  work: () => T,
): T {
  const keyed: KeyedWork<CommitStep> = { step, strayWrite };
  return keyedWork.run(keyed, work);
}

/** Runs work in a transaction, or statements that commit one by one. Services inject this, not the data source. */
@Injectable()
export class Transactions {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Commits when `work` resolves (after the step of `withStepBeforeEachCommit`), rolls back when it rejects. */
  run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      const tx = manager as Tx;
      return inTransactionOn(await connectionOf(tx), async () => {
        const result = await work(tx);
        await (keyedWork.getStore() as KeyedWork<CommitStep> | undefined)?.step(tx);
        return result;
      });
    });
  }

  /**
   * A write of one statement, which needs no transaction of its own: on `autocommit`, except in a keyed
   * request, where it runs in a transaction so that its `Idempotency-Key` commits with it (a keyed write
   * outside one is refused).
   */
  writeOne<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return keyedWork.getStore() ? this.run(work) : work(this.dataSource);
  }

  /**
   * A transaction beside the request's own work, without the step of `withStepBeforeEachCommit`: one that an
   * answer refusing the request also commits (an upload's quota reservation) does not stand for its write.
   */
  runAside<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      const tx = manager as Tx;
      return inTransactionOn(await connectionOf(tx), () => work(tx));
    });
  }

  /** Where a read or a one-statement write runs outside a transaction (a pooled connection per statement). */
  get autocommit(): Db {
    return this.dataSource;
  }
}

/** The database connection a transaction runs on (its query runner's, connected when it began). */
const connectionOf = async (tx: Tx): Promise<object> => (await tx.queryRunner!.connect()) as object;

/** `Transactions` for the modules that import it (TypeORM's data source is there app-wide). */
@Module({ providers: [Transactions], exports: [Transactions] })
export class TransactionsModule {}
