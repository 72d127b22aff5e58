import { Injectable, Logger, OnApplicationShutdown, StreamableFile } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { stringify } from 'csv-stringify';
import type { Response } from 'express';
import { pipeline, Readable, Transform, TransformCallback } from 'node:stream';
import { DataSource } from 'typeorm';
import { TaskAccess } from '../access/access.service';
import { AuthUser } from '../common/decorators/current-user.decorator';
import { ErrorCode } from '../common/errors/app-error';
import { zonedIsoFormatter } from '../common/utils/zoned-time';
import { AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';
import { DatabasePool } from '../database/connection-failures';
import { dataSourceUrl, isPooled, poolSettings } from '../database/typeorm-options';
import { scoreNumber } from './submissions.mapper';
import { ExportRow, SubmissionsRepository } from './submissions.repository';

const EXPORT_HEADER = [
  'Nickname',
  'School',
  'Student number',
  'Class',
  'Task title',
  'First submission time',
  'Last update time',
  'Score',
];

/** Rows fetched from the cursor per round trip; memory holds about this many rows at a time. */
const CURSOR_BATCH = 500;
/** csv-stringify emits one small chunk per row; the response gets them in pieces of about this size. */
const RESPONSE_CHUNK_BYTES = 64 * 1024;

/** Before the first byte the client still gets the usual error body; afterwards only a cut connection. */
const answerExportFailure: Parameters<StreamableFile['setErrorHandler']>[0] = (_error, handlerResponse) => {
  // The Express adapter hands over the Express response.
  const response = handlerResponse as unknown as Response;
  if (response.headersSent) {
    response.destroy();
    return;
  }
  response.removeHeader('Content-Disposition');
  response
    .status(500)
    .type('application/json')
    .send(JSON.stringify({ error: 'Internal server error', code: ErrorCode.INTERNAL_ERROR }));
};

/** Joins small chunks into pieces of about `size` bytes: one socket write per piece instead of per row. */
function coalesce(size: number): Transform {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes < size) return done();
      const piece = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      done(null, piece);
    },
    flush(done: TransformCallback) {
      done(null, pendingBytes ? Buffer.concat(pending, pendingBytes) : null);
    },
  });
}

/**
 * The CSV export: one row per class member, streamed from a database cursor through
 * csv-stringify to the response with backpressure, so memory does not grow with the class size.
 *
 * The cursor holds its connection for as long as the client takes to read, so exports get a pool of their own
 * (`EXPORT_CONCURRENCY`): slow or stalled downloads can only make other exports wait, never the API, whose pool
 * they would otherwise fill. An export that delivers nothing for `EXPORT_STALL_TIMEOUT_MS` is cut.
 */
@Injectable()
export class SubmissionsExportService implements OnApplicationShutdown {
  private readonly logger = new Logger(SubmissionsExportService.name);
  private pool: DatabasePool | null = null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectConfig() private readonly config: AppConfig,
    private readonly submissions: SubmissionsRepository,
  ) {}

  /** `access`: the route's `@TaskManagerRoute()`. */
  async export({ taskId }: TaskAccess, user: AuthUser, response: Response): Promise<StreamableFile> {
    const time = zonedIsoFormatter(user.timezone);
    const client = await this.exportPool().connect();
    if (response.destroyed || response.req.socket.destroyed) {
      // The client left while the export waited for a connection: no cursor for nobody, the connection goes back.
      client.release();
      return new StreamableFile(Readable.from([]));
    }
    // Socket inactivity: a client that reads nothing lets no write complete. Cutting the response destroys the
    // stream, and the pipeline below discards the connection.
    response.setTimeout(this.config.exports.stallTimeoutMs, () => {
      this.logger.warn({ taskId }, 'Submission export cut: the client took nothing for too long');
      response.destroy();
    });
    const rows = this.submissions.exportRows(client, taskId, CURSOR_BATCH);
    const toRecord = new Transform({
      objectMode: true,
      transform(row: ExportRow, _encoding: BufferEncoding, done: TransformCallback) {
        const score = scoreNumber(row.score);
        done(null, [
          row.displayName,
          row.schoolName,
          row.studentId,
          row.className,
          row.title,
          row.firstSubmittedAt && time(row.firstSubmittedAt),
          row.lastUpdatedAt && time(row.lastUpdatedAt),
          score === null ? null : String(score),
        ]);
      },
    });
    const csv = stringify({
      bom: true,
      header: true,
      columns: EXPORT_HEADER,
      record_delimiter: 'windows',
      // With a custom record delimiter csv-stringify would no longer quote a bare \n or \r inside a cell.
      quote_record_delimiter: true,
      escape_formulas: true,
    });
    // Ends once the last row has passed every stage, or when a stage fails or the client goes away (the
    // response then destroys the last stage). A connection whose cursor was cut short is discarded, not pooled.
    const chunks = coalesce(RESPONSE_CHUNK_BYTES);
    pipeline(rows, toRecord, csv, chunks, (error) => {
      client.release(error ?? undefined);
      if (error && error.code !== 'ERR_STREAM_PREMATURE_CLOSE') {
        this.logger.error({ err: error, taskId }, 'Submission export failed');
      }
    });
    return new StreamableFile(chunks, {
      type: 'text/csv; charset=utf-8',
      disposition: `attachment; filename="task-${taskId}-submissions.csv"`,
    }).setErrorHandler(answerExportFailure);
  }

  /** After the HTTP server closed: running exports finish (or are cut), then the connections close. */
  async onApplicationShutdown(): Promise<void> {
    await this.pool?.end();
  }

  /** Same connection settings as TypeORM's pool; created at the first export. */
  private exportPool(): DatabasePool {
    if (!this.pool) {
      // Without the statement limits: they span a cursor's whole life, which the client's reading speed sets;
      // EXPORT_STALL_TIMEOUT_MS cuts an export that stops moving, database silent or not.
      this.pool = new DatabasePool({
        ...poolSettings(this.config, { statementLimits: false, pooled: isPooled(this.config) }),
        connectionString: dataSourceUrl(this.dataSource),
        max: this.config.exports.concurrency,
      });
      // An idle connection that fails (database restart) is dropped by the pool; unheard, it would crash us.
      this.pool.on('error', (error) => this.logger.warn({ err: error }, 'Export pool connection failed'));
    }
    return this.pool;
  }
}
