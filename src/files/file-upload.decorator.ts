import { applyDecorators, HttpStatus, UseInterceptors } from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import {
  ApiBody,
  ApiConsumes,
  ApiForbiddenResponse,
  ApiPayloadTooLargeResponse,
  ApiResponse,
  ApiServiceUnavailableResponse,
} from '@nestjs/swagger';
import { ErrorResponse } from '../common/errors/error.response';
import { StorageQuotaInterceptor, StoredFileQuota } from './storage-quota';

/**
 * An upload route: one multipart part `file`, streamed to storage by the shared multer setup (read it with
 * `@UploadedFile()`) once the caller's quota holds the declared size, and kept only if the stored file fits
 * the quota (see `StorageQuota`), documented for OpenAPI with its 403, 413, 503 and 507. Check access with a
 * guard beside it (`@TaskRoute`): guards run before these interceptors, so a
 * refused caller stores nothing.
 */
export const FileUpload = (): MethodDecorator =>
  applyDecorators(
    UseInterceptors(StorageQuotaInterceptor, FileInterceptor('file'), StoredFileQuota),
    ApiConsumes('multipart/form-data'),
    ApiBody({
      schema: {
        type: 'object',
        required: ['file'],
        properties: { file: { type: 'string', format: 'binary' } },
      },
    }),
    ApiPayloadTooLargeResponse({
      type: ErrorResponse,
      description: 'PAYLOAD_TOO_LARGE: file larger than UPLOAD_MAX_BYTES',
    }),
    ApiForbiddenResponse({
      type: ErrorResponse,
      description: 'QUOTA_EXCEEDED: the upload would pass STORAGE_QUOTA_BYTES_PER_USER (nothing stored)',
    }),
    ApiServiceUnavailableResponse({
      type: ErrorResponse,
      description: 'STORAGE_UNAVAILABLE: the file storage failed or did not answer (nothing stored)',
    }),
    ApiResponse({
      status: HttpStatus.INSUFFICIENT_STORAGE,
      type: ErrorResponse,
      description: 'INSUFFICIENT_STORAGE: no room left in the file storage (nothing stored)',
    }),
  );
