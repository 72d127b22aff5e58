import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { affected, one } from '../database/sql';
import { Tx } from '../database/transactions';

/** What a request claims its key with: who, which key, and the request the key stands for. */
export interface KeyClaim {
  userId: string;
  key: string;
  method: string;
  path: string;
  /** Null for a multipart request until its answer is kept. */
  fingerprint: string | null;
}

/** The row of a key someone else holds, as the claim found it. */
export interface KeptKey {
  requestMethod: string;
  requestPath: string;
  requestFingerprint: string | null;
  /** The request's transaction committed: it never runs again, answer or not. */
  writeCommitted: boolean;
  /** Claimed longer ago than a request can run: no answer will come any more. */
  abandoned: boolean;
  responseStatus: number | null;
  responseContentType: string | null;
  responseBody: string | null;
  /** Only the status was kept: the answer carried credentials. */
  responseWithheld: boolean;
}

export interface KeptAnswer {
  status: number;
  contentType: string | null;
  /** Null with `withheld`: the body is not kept. */
  body: string | null;
  withheld: boolean;
  fingerprint: string | null;
}

/**
 * One statement decides who owns a key: the insert, or the take-over of a row past its retention or abandoned
 * in flight (its instance stopped before answering) before its write committed. Concurrent claims of one key
 * serialise on its row; the losers see the winner's row and get no claim. A take-over changes `created_at`,
 * which identifies the claim, so the request that lost the key can no longer commit (`commitWith`).
 */
const CLAIM = `
  INSERT INTO idempotency_keys AS k (user_id, key, request_method, request_path, request_fingerprint)
  VALUES ($1, $2, $3, $4, $5)
  ON CONFLICT (user_id, key) DO UPDATE
     SET request_method = EXCLUDED.request_method, request_path = EXCLUDED.request_path,
         request_fingerprint = EXCLUDED.request_fingerprint, response_status = NULL,
         response_content_type = NULL, response_body = NULL, response_withheld = false,
         write_committed = false, created_at = now()
   WHERE k.created_at < now() - make_interval(secs => $6)
      OR (k.response_status IS NULL AND NOT k.write_committed
          AND k.created_at < now() - make_interval(secs => $7))
  RETURNING k.created_at::text AS "claimedAt"`;

@Injectable()
export class IdempotencyKeysRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * The claim's time, which identifies it (as text: a Date would drop the microseconds); null when another
   * request holds the key.
   */
  async claim(
    claim: KeyClaim,
    retentionSeconds: number,
    abandonedAfterSeconds: number,
  ): Promise<string | null> {
    const row = await one<{ claimedAt: string }>(this.dataSource, CLAIM, [
      claim.userId,
      claim.key,
      claim.method,
      claim.path,
      claim.fingerprint,
      retentionSeconds,
      abandonedAfterSeconds,
    ]);
    return row?.claimedAt ?? null;
  }

  find(userId: string, key: string, abandonedAfterSeconds: number): Promise<KeptKey | null> {
    return one<KeptKey>(
      this.dataSource,
      `SELECT request_method AS "requestMethod", request_path AS "requestPath",
              request_fingerprint AS "requestFingerprint", write_committed AS "writeCommitted",
              created_at < now() - make_interval(secs => $3) AS "abandoned",
              response_status AS "responseStatus", response_content_type AS "responseContentType",
              response_body AS "responseBody", response_withheld AS "responseWithheld"
         FROM idempotency_keys WHERE user_id = $1 AND key = $2`,
      [userId, key, abandonedAfterSeconds],
    );
  }

  /**
   * Marks the claim's write as committed in the write's own transaction. False when the claim is no longer
   * this request's (taken over as abandoned): the caller must then roll back.
   */
  async commitWith(tx: Tx, userId: string, key: string, claimedAt: string): Promise<boolean> {
    const marked = await affected(
      tx,
      `UPDATE idempotency_keys SET write_committed = true
        WHERE user_id = $1 AND key = $2 AND created_at = $3::timestamptz`,
      [userId, key, claimedAt],
    );
    return marked === 1;
  }

  async complete(userId: string, key: string, claimedAt: string, answer: KeptAnswer): Promise<void> {
    await affected(
      this.dataSource,
      `UPDATE idempotency_keys
          SET response_status = $4, response_content_type = $5, response_body = $6, response_withheld = $7,
              request_fingerprint = coalesce(request_fingerprint, $8)
        WHERE user_id = $1 AND key = $2 AND created_at = $3::timestamptz AND response_status IS NULL`,
      [
        userId,
        key,
        claimedAt,
        answer.status,
        answer.contentType,
        answer.body,
        answer.withheld,
        answer.fingerprint,
      ],
    );
  }

  /**
   * Gives the key up, so that a retry runs the request again; false (nothing given up) once the request's
   * write committed.
   */
  async release(userId: string, key: string, claimedAt: string): Promise<boolean> {
    const released = await affected(
      this.dataSource,
      `DELETE FROM idempotency_keys
        WHERE user_id = $1 AND key = $2 AND created_at = $3::timestamptz
          AND response_status IS NULL AND NOT write_committed`,
      [userId, key, claimedAt],
    );
    return released === 1;
  }

  /** Deletes up to `limit` rows past their retention; rows another instance is deleting are skipped. */
  deleteExpired(retentionSeconds: number, limit: number): Promise<number> {
    return affected(
      this.dataSource,
      `DELETE FROM idempotency_keys
        WHERE (user_id, key) IN (
              SELECT user_id, key FROM idempotency_keys
               WHERE created_at < now() - make_interval(secs => $1)
               ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [retentionSeconds, limit],
    );
  }
}
