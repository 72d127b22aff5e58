import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Kept answers of Idempotency-Keys and account mails waiting in the outbox are sealed from now on (a webhook's
 * signing secret, a one-time link must not be readable from a dump). What was kept in clear before: the
 * answers are dropped (a repeat of such a key answers that it was carried out, without its answer), and the
 * bodies of account mails already sent or given up are emptied (mails still pending are sent as they are).
 */
export class SealedKeptAnswers1764002400000 implements MigrationInterface {
  name = 'SealedKeptAnswers1764002400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      UPDATE idempotency_keys SET response_body = NULL, response_withheld = true
       WHERE response_body IS NOT NULL AND response_body NOT LIKE 'sealed.v1.%';
      UPDATE notification_deliveries
         SET payload = jsonb_build_object('subject', payload->>'subject', 'text', '', 'html', NULL)
       WHERE payload IS NOT NULL AND status <> 'PENDING' AND NOT payload ? 'sealed';
    `);
  }

  async down(): Promise<void> {
    // Nothing to restore: what was dropped was a copy of answers and mails already given.
  }
}
