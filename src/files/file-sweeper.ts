import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { RunningJobs } from '../common/jobs/running-jobs';
import { type AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';
import { endWithin, sessionClient } from '../database/session-client';
import { dataSourceUrl, sessionUrl } from '../database/typeorm-options';
import { FileStorage } from './file-storage';
import { FilesRepository } from './files.repository';

/**
 * What the sweep leaves alone: anything written to within the last hour may belong to an upload in flight
 * on some instance (Node ends a request after 5 minutes; a row is written right after its body).
 */
export const SWEEP_GRACE_MS = 60 * 60 * 1000;
/** Bounds of one pass: keys per listing and per database check, listings per pass. */
export const SWEEP_PAGE_SIZE = 1000;
export const SWEEP_PAGES_PER_PASS = 10;
/** Held by the instance sweeping; the others skip their pass (only this job takes it). */
export const SWEEP_LOCK_KEY = 7_231_005;

export interface SweepOptions {
  graceMs: number;
  pageSize: number;
  pagesPerPass: number;
}

export interface SweepResult {
  /** Incomplete uploads removed. */
  incomplete: number;
  /** Quota reservations of uploads a crash ended. */
  reservations: number;
  /** Stored objects looked at, and those removed for having no row. */
  scanned: number;
  orphans: number;
}

/**
 * Removes what a crash leaves in the file storage: incomplete uploads, quota reservations, and stored files
 * without an attachment row (stored, then the process died before the row was written; or a row deleted, then the
 * process died before its file was). At start and hourly, a bounded pass each time, continuing where the
 * last pass of this instance stopped. Only what is older than SWEEP_GRACE_MS goes.
 */
@Injectable()
export class FileSweeper implements OnApplicationBootstrap {
  private readonly logger = new Logger(FileSweeper.name);
  private readonly databaseUrl: string;
  /** The last key the previous pass looked at; undefined starts from the first. */
  private cursor: string | undefined;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    @InjectConfig() private readonly config: AppConfig,
    private readonly storage: FileStorage,
    private readonly files: FilesRepository,
    private readonly jobs: RunningJobs,
  ) {
    // The lock is held across many statements and store calls: a session's, never a pooler's.
    this.databaseUrl = sessionUrl(config, dataSourceUrl(dataSource));
  }

  /** Before the instance listens: a pass is bounded, and a failed one is logged, not a reason to stop. */
  async onApplicationBootstrap(): Promise<void> {
    await this.sweepLogged();
  }

  @Cron(CronExpression.EVERY_HOUR, { name: 'files.sweep' })
  async sweepLogged(): Promise<void> {
    await this.jobs
      .run('files.sweep', () => this.sweep())
      .catch((error: unknown) => this.logger.error({ err: error }, 'File sweep failed'));
  }

  /** One pass; null when another instance holds the sweep lock. */
  async sweep(options: Partial<SweepOptions> = {}): Promise<SweepResult | null> {
    const { graceMs, pageSize, pagesPerPass }: SweepOptions = {
      graceMs: SWEEP_GRACE_MS,
      pageSize: SWEEP_PAGE_SIZE,
      pagesPerPass: SWEEP_PAGES_PER_PASS,
      ...options,
    };
    // Its own connection, as the migrations' lock: the lock is the session's, and the pool may hold one.
    const client = sessionClient(this.config, this.databaseUrl, 'classroom-task-service-file-sweep');
    await client.connect();
    try {
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
        SWEEP_LOCK_KEY,
      ]);
      if (!rows[0].locked) return null;
      const before = new Date(Date.now() - graceMs);
      const result: SweepResult = {
        incomplete: await this.storage.removeIncomplete(before, pageSize),
        reservations: await this.files.deleteStaleReservations(before),
        scanned: 0,
        orphans: 0,
      };
      for (let page = 0; page < pagesPerPass; page += 1) {
        const objects = await this.storage.list(this.cursor, pageSize);
        // A short page is the end of the store: the next pass starts over.
        this.cursor = objects.length === pageSize ? objects[objects.length - 1].key : undefined;
        result.scanned += objects.length;
        const old = objects.filter((object) => object.modifiedAt < before).map((object) => object.key);
        const orphans = old.length > 0 ? await keysWithoutRow(client, old) : [];
        await this.storage.remove(orphans);
        result.orphans += orphans.length;
        if (this.cursor === undefined) break;
      }
      this.logger.log(result, 'Swept the file storage');
      return result;
    } finally {
      // Ending the session releases the lock; a connection gone silent is closed rather than waited for.
      await endWithin(client);
    }
  }
}

/** The keys no attachment row refers to (an older version's of a submission included). */
async function keysWithoutRow(client: Client, keys: string[]): Promise<string[]> {
  const { rows } = await client.query<{ key: string }>(
    `SELECT k.key FROM unnest($1::varchar[]) AS k(key)
      WHERE NOT EXISTS (SELECT 1 FROM task_attachments WHERE file_key = k.key)
        AND NOT EXISTS (SELECT 1 FROM submission_attachments WHERE file_key = k.key)
        AND NOT EXISTS (SELECT 1 FROM submission_attachment_history WHERE file_key = k.key)`,
    [keys],
  );
  return rows.map((row) => row.key);
}
