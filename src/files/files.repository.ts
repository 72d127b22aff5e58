import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { affected, one } from '../database/sql';
import { Transactions, Tx } from '../database/transactions';

/** Namespace of the per-user advisory locks of the quota check (two-key form: apart from one-key locks). */
const QUOTA_LOCK_NAMESPACE = 7_231_018;

export interface StoredFileRow {
  task_id: string;
  /** Set for a submission file: its submitter. */
  submitter_id: string | null;
  original_name: string;
  mime_type: string | null;
  size_bytes: string | null;
}

/**
 * The bytes of the task files user $1 uploaded and of their submission files, those only older versions of a
 * submission hold included (each file is in one of the two submission tables).
 */
const FILE_BYTES_OF_USER = `COALESCE((SELECT sum(size_bytes) FROM task_attachments WHERE uploaded_by = $1), 0)
  + COALESCE((SELECT sum(sa.size_bytes) FROM submission_attachments sa
                JOIN submissions s ON s.id = sa.submission_id WHERE s.user_id = $1), 0)
  + COALESCE((SELECT sum(h.size_bytes) FROM submission_attachment_history h
                JOIN submissions s ON s.id = h.submission_id WHERE s.user_id = $1), 0)`;

/** The per-user quota lock, held to the end of the transaction of `manager`. */
async function lockQuotaOf(manager: Tx, userId: string): Promise<void> {
  await one(manager, 'SELECT pg_advisory_xact_lock($1, hashtext($2))', [QUOTA_LOCK_NAMESPACE, userId]);
}

/** The attachment rows behind a stored file, task or submission. */
@Injectable()
export class FilesRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {}

  /**
   * The task or submission attachment stored under `fileKey` (one an older version of a submission holds too),
   * with what its access rule needs.
   */
  findByKey(fileKey: string): Promise<StoredFileRow | null> {
    return one<StoredFileRow>(
      this.dataSource,
      `SELECT ta.task_id, NULL::uuid AS submitter_id, ta.original_name, ta.mime_type, ta.size_bytes
         FROM task_attachments ta WHERE ta.file_key = $1
       UNION ALL
       SELECT s.task_id, s.user_id, sa.original_name, sa.mime_type, sa.size_bytes
         FROM submission_attachments sa JOIN submissions s ON s.id = sa.submission_id
        WHERE sa.file_key = $1
       UNION ALL
       SELECT s.task_id, s.user_id, h.original_name, h.mime_type, h.size_bytes
         FROM submission_attachment_history h JOIN submissions s ON s.id = h.submission_id
        WHERE h.file_key = $1`,
      [fileKey],
    );
  }

  /**
   * Reserves `bytes` (an upload's declared size) for `userId` and answers the reservation's id, or null
   * when the user's files, their reservations newer than `liveSince` (at their stored size once settled, else
   * their declared one) and `bytes` would pass `limitBytes`. A per-user transaction lock makes concurrent
   * uploads of one user check one after the other, here and in `settleStorage`.
   */
  reserveStorage(userId: string, bytes: number, limitBytes: number, liveSince: Date): Promise<string | null> {
    return this.transactions.runAside(async (manager) => {
      await lockQuotaOf(manager, userId);
      const reservation = await one<{ id: string }>(
        manager,
        `INSERT INTO storage_reservations (user_id, bytes)
         SELECT $1, $2::bigint
          WHERE ${FILE_BYTES_OF_USER}
              + COALESCE((SELECT sum(COALESCE(stored_bytes, bytes)) FROM storage_reservations
                           WHERE user_id = $1 AND created_at > $4), 0)
              + $2::bigint <= $3::bigint
         RETURNING id`,
        [userId, bytes, limitBytes, liveSince],
      );
      return reservation?.id ?? null;
    });
  }

  /**
   * Settles `reservationId` to the `storedBytes` of its stored file, if the user's files, their other
   * settled reservations newer than `liveSince` and `storedBytes` stay within `quotaBytes`; answers whether
   * they do. Reservations not yet settled are not counted: each is checked when its own file is stored.
   */
  settleStorage(
    reservationId: string,
    userId: string,
    storedBytes: number,
    quotaBytes: number,
    liveSince: Date,
  ): Promise<boolean> {
    return this.transactions.runAside(async (manager) => {
      await lockQuotaOf(manager, userId);
      const settled = await one<{ id: string }>(
        manager,
        `UPDATE storage_reservations SET stored_bytes = $2::bigint
          WHERE id = $5
            AND ${FILE_BYTES_OF_USER}
              + COALESCE((SELECT sum(stored_bytes) FROM storage_reservations
                           WHERE user_id = $1 AND created_at > $4 AND id <> $5), 0)
              + $2::bigint <= $3::bigint
          RETURNING id`,
        [userId, storedBytes, quotaBytes, liveSince, reservationId],
      );
      return settled !== null;
    });
  }

  async releaseStorage(reservationId: string): Promise<void> {
    await affected(this.dataSource, 'DELETE FROM storage_reservations WHERE id = $1', [reservationId]);
  }

  /** Deletes reservations a crash left behind (made before `before`); answers how many. */
  deleteStaleReservations(before: Date): Promise<number> {
    return affected(this.dataSource, 'DELETE FROM storage_reservations WHERE created_at < $1', [before]);
  }
}
