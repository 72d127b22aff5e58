import { EntitySubscriberInterface, EventSubscriber, TransactionStartEvent } from 'typeorm';
import { AppConfig } from '../config/config';

/**
 * The server limits of a session, for each transaction through a transaction-mode pooler, which refuses
 * them as startup parameters and may run every transaction on another server connection. `SET LOCAL` ends
 * with the transaction, so nothing leaks to the next client of that connection.
 */
export function transactionLimits(database: AppConfig['database']): new () => EntitySubscriberInterface {
  const statement = `SET LOCAL statement_timeout = ${database.queryTimeoutMs}; SET LOCAL idle_in_transaction_session_timeout = ${database.idleInTransactionTimeoutMs}`;

  @EventSubscriber()
  class TransactionLimits implements EntitySubscriberInterface {
    async afterTransactionStart({ queryRunner }: TransactionStartEvent): Promise<void> {
      await queryRunner.query(statement);
    }
  }
  return TransactionLimits;
}
