import { applyDecorators, UseInterceptors } from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import { ApiBody, ApiConsumes, ApiPayloadTooLargeResponse } from '@nestjs/swagger';
import { ErrorResponse } from '../common/errors/error.response';

/**
 * An upload route: one multipart part `file`, streamed to storage by the shared multer setup (read it with
 * `@UploadedFile()`), documented for OpenAPI with its 413. Check access with a guard beside it
 * (`@TaskRoute`): guards run before this interceptor, so a refused caller stores nothing.
 */
export const FileUpload = (): MethodDecorator =>
  applyDecorators(
    UseInterceptors(FileInterceptor('file')),
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
  );
