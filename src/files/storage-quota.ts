import { CallHandler, ExecutionContext, Injectable, Logger, NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import { catchError, from, mergeMap, Observable, throwError } from 'rxjs';
import { AuthUser } from '../common/decorators/current-user.decorator';
import { AppError, ErrorCode } from '../common/errors/app-error';
import { type AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';
import { SWEEP_GRACE_MS } from './file-sweeper';
import { FileStorage } from './file-storage';
import { FilesRepository } from './files.repository';
import { UploadedFileInfo } from './multer-storage.engine';

/**
 * What the pre-check lets an upload's declared size (its Content-Length) pass the quota by: the multipart
 * envelope around the file (boundaries, part headers, a file name of up to 255 characters) stays below it.
 */
export const MULTIPART_ENVELOPE_ALLOWANCE = 4096;

/**
 * STORAGE_QUOTA_BYTES_PER_USER, counting file bytes. Before an upload stores a byte, the
 * bytes it declares are reserved against its user's total of task and submission files, and one that
 * would pass the quota even without its envelope is refused. Once the file is stored, the reservation is
 * settled to the file's own size, and the upload refused if that passes the quota: a file that brings the
 * total exactly to the quota is stored. Refusals are 403 QUOTA_EXCEEDED.
 */
@Injectable()
export class StorageQuota {
  constructor(
    private readonly files: FilesRepository,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  /**
   * Reserves what a request of `declaredBytes` (its Content-Length; null when it sends none) may store: at
   * most UPLOAD_MAX_BYTES, as a larger file answers 413. Null when there is no quota.
   */
  async reserve(userId: string, declaredBytes: number | null): Promise<string | null> {
    const { quotaBytesPerUser, maxBytes } = this.config.uploads;
    if (quotaBytesPerUser === 0) return null;
    const bytes = Math.min(declaredBytes ?? maxBytes, maxBytes);
    const limit = quotaBytesPerUser + MULTIPART_ENVELOPE_ALLOWANCE;
    const reservation = await this.files.reserveStorage(userId, bytes, limit, liveSince());
    if (reservation === null) throw this.exceeded();
    return reservation;
  }

  /** Settles `reservation` to the stored file's `storedBytes`; 403 QUOTA_EXCEEDED past the quota. */
  async settle(reservation: string, userId: string, storedBytes: number): Promise<void> {
    const { quotaBytesPerUser } = this.config.uploads;
    if (!(await this.files.settleStorage(reservation, userId, storedBytes, quotaBytesPerUser, liveSince()))) {
      throw this.exceeded();
    }
  }

  /** Once the upload's row is written or it failed, the row (if any) counts instead. */
  release(reservation: string): Promise<void> {
    return this.files.releaseStorage(reservation);
  }

  private exceeded(): AppError {
    return new AppError(
      ErrorCode.QUOTA_EXCEEDED,
      `This upload would pass your storage quota of ${this.config.uploads.quotaBytesPerUser} bytes`,
    );
  }
}

/** A reservation older than any upload in flight was left by a crash and no longer counts. */
const liveSince = (): Date => new Date(Date.now() - SWEEP_GRACE_MS);

/** The reservation of each upload request in flight, from `StorageQuotaInterceptor` to `StoredFileQuota`. */
const reservations = new WeakMap<Request, string>();

/** Holds a quota reservation around an upload route's multipart parsing and handler (see `FileUpload`). */
@Injectable()
export class StorageQuotaInterceptor implements NestInterceptor {
  private readonly logger = new Logger(StorageQuotaInterceptor.name);

  constructor(private readonly quota: StorageQuota) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const request = context.switchToHttp().getRequest<Request>();
    const length = request.headers['content-length'];
    const declared = length === undefined ? null : Number(length);
    const reservation = await this.quota.reserve((request.user as AuthUser).id, declared);
    if (reservation === null) return next.handle();
    reservations.set(request, reservation);
    // Released before the answer, so the caller's next upload sees only what is stored.
    const release = (): Promise<void> =>
      this.quota.release(reservation).catch((error: unknown) => {
        // One left here stops counting after the sweep's grace period.
        this.logger.error({ err: error }, 'Could not release a storage reservation');
      });
    return next.handle().pipe(
      mergeMap(async (answer: unknown) => {
        await release();
        return answer;
      }),
      catchError((error: unknown) => from(release()).pipe(mergeMap(() => throwError(() => error)))),
    );
  }
}

/**
 * After multer stored the upload's file, before the handler writes its row: settles the request's
 * reservation to the file's size; past the quota the file is removed and the upload answers 403.
 */
@Injectable()
export class StoredFileQuota implements NestInterceptor {
  constructor(
    private readonly quota: StorageQuota,
    private readonly storage: FileStorage,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const request = context.switchToHttp().getRequest<Request>();
    const reservation = reservations.get(request);
    const file = request.file as UploadedFileInfo | undefined;
    if (reservation !== undefined && file) {
      try {
        await this.quota.settle(reservation, (request.user as AuthUser).id, file.size);
      } catch (error) {
        await this.storage.discard([file.key], { reason: 'over the storage quota' });
        throw error;
      }
    }
    return next.handle();
  }
}
