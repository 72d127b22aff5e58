import { Injectable, Logger, OnApplicationShutdown, StreamableFile } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { stringify } from 'csv-stringify';
import type { Response } from 'express';
import { pipeline, Readable, Transform, TransformCallback } from 'node:stream';
import { PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import { ErrorCode } from '../common/errors/app-error';
import { Metrics } from '../common/metrics/metrics';
import { type AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';
import { DatabasePool } from '../database/connection-failures';
import { dataSourceUrl, isPooled, poolSettings } from '../database/typeorm-options';

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

/** A cell of a CSV record: text, or empty. */
export type CsvCell = string | null;

/** What an export streams: its header row, its rows from a database cursor, and each row's record. */
export interface CsvSource<Row> {
  header: string[];
  rows: Readable;
  record: (row: Row) => CsvCell[];
}

export interface CsvExport<Row> {
  /** The file name the download suggests. */
  filename: string;
  /** Logged with a failure or a cut. */
  context: Record<string, unknown>;
  /** Reads what the header needs and opens the rows' cursor, on the export's own connection. */
  open: (client: PoolClient) => CsvSource<Row> | Promise<CsvSource<Row>>;
}

/**
 * CSV exports (UTF-8 with BOM, CRLF, RFC 4180 quoting, a leading `=`, `+`, `-`, `@`, tab or carriage return
 * guarded by `'`), streamed from a database cursor through csv-stringify to the response with backpressure,
 * so memory does not grow with the number of rows.
 *
 * The cursor holds its connection for as long as the client takes to read, so exports get a pool of their own
 * (`EXPORT_CONCURRENCY`): slow or stalled downloads can only make other exports wait, never the API, whose pool
 * they would otherwise fill. An export that delivers nothing for `EXPORT_STALL_TIMEOUT_MS` is cut.
 */
@Injectable()
export class CsvStreams implements OnApplicationShutdown {
  private readonly logger = new Logger(CsvStreams.name);
  private pool: DatabasePool | null = null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectConfig() private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {}

  async stream<Row>(
    response: Response,
    { filename, context, open }: CsvExport<Row>,
  ): Promise<StreamableFile> {
    const client = await this.exportPool().connect();
    if (response.destroyed || response.req.socket.destroyed) {
      // The client left while the export waited for a connection: no cursor for nobody, the connection goes back.
      client.release();
      return new StreamableFile(Readable.from([]));
    }
    let source: CsvSource<Row>;
    try {
      source = await open(client);
    } catch (error) {
      client.release(error instanceof Error ? error : undefined);
      throw error;
    }
    // Socket inactivity: a client that reads nothing lets no write complete. Cutting the response destroys the
    // stream, and the pipeline below discards the connection.
    response.setTimeout(this.config.exports.stallTimeoutMs, () => {
      this.logger.warn(context, 'CSV export cut: the client took nothing for too long');
      response.destroy();
    });
    const toRecord = new Transform({
      objectMode: true,
      transform(row: Row, _encoding: BufferEncoding, done: TransformCallback) {
        done(null, source.record(row));
      },
    });
    const csv = stringify({
      bom: true,
      header: true,
      columns: source.header,
      record_delimiter: 'windows',
      // With a custom record delimiter csv-stringify would no longer quote a bare \n or \r inside a cell.
      quote_record_delimiter: true,
      escape_formulas: true,
    });
    // Ends once the last row has passed every stage, or when a stage fails or the client goes away (the
    // response then destroys the last stage). A connection whose cursor was cut short is discarded, not pooled.
    const chunks = coalesce(RESPONSE_CHUNK_BYTES);
    pipeline(source.rows, toRecord, csv, chunks, (error) => {
      client.release(error ?? undefined);
      if (error && error.code !== 'ERR_STREAM_PREMATURE_CLOSE') {
        this.logger.error({ ...context, err: error }, 'CSV export failed');
      }
    });
    return new StreamableFile(chunks, {
      type: 'text/csv; charset=utf-8',
      disposition: `attachment; filename="${filename}"`,
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
        observer: this.metrics.poolObserver('export'),
      });
      // An idle connection that fails (database restart) is dropped by the pool; unheard, it would crash us.
      this.pool.on('error', (error) => this.logger.warn({ err: error }, 'Export pool connection failed'));
    }
    return this.pool;
  }
}
