import { CallHandler, ExecutionContext, Injectable, Logger, NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import { catchError, from, mergeMap, Observable, throwError } from 'rxjs';
import { AuthUser } from '../common/decorators/current-user.decorator';
import { AppError, ErrorCode } from '../common/errors/app-error';
import { AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';
import { SWEEP_GRACE_MS } from './file-sweeper';
import { FilesRepository } from './files.repository';

/**
 * STORAGE_QUOTA_BYTES_PER_USER (CONTRACT §5.8): before an upload stores a byte, the bytes it declares are
 * reserved against its user's total of task and submission files; past the quota, 403 QUOTA_EXCEEDED.
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
    // A reservation older than any upload in flight was left by a crash and no longer counts.
    const liveSince = new Date(Date.now() - SWEEP_GRACE_MS);
    const reservation = await this.files.reserveStorage(userId, bytes, quotaBytesPerUser, liveSince);
    if (reservation === null) {
      throw new AppError(
        ErrorCode.QUOTA_EXCEEDED,
        `This upload would pass your storage quota of ${quotaBytesPerUser} bytes`,
      );
    }
    return reservation;
  }

  /** Once the upload's row is written or it failed, the row (if any) counts instead. */
  release(reservation: string): Promise<void> {
    return this.files.releaseStorage(reservation);
  }
}

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
