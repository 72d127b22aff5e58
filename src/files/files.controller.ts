import { Controller, Get, Header, Param, StreamableFile } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { FileRoute } from '../access/access-route.decorators';
import { AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { ErrorResponse } from '../common/errors/error.response';
import { FilesService } from './files.service';

/** RFC 5987 value: percent-encoded UTF-8, including the characters encodeURIComponent leaves alone. */
const encodeRfc5987 = (value: string): string =>
  encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** `attachment` with an ASCII fallback name for old clients and the exact UTF-8 name in `filename*`. */
export function contentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeRfc5987(name)}`;
}

@ApiTags('files')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorResponse, description: 'Missing or invalid token' })
@Controller('files')
export class FilesController {
  constructor(private readonly files: FilesService) {}

  @Get(':fileKey')
  @FileRoute({ forbidden: 'FORBIDDEN: a submission file of another member (MEMBER caller)' })
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    summary: 'Download an attachment',
    description:
      'Task files: anyone who can see the task. Submission files: the submitter and the class OWNER/ADMIN.',
  })
  @ApiOkResponse({
    description:
      'The bytes, with the stored Content-Type, Content-Disposition (UTF-8 filename*) and Content-Length',
    content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
  })
  @ApiServiceUnavailableResponse({
    type: ErrorResponse,
    description: 'STORAGE_UNAVAILABLE: the file storage failed or did not answer',
  })
  async download(@Param('fileKey') fileKey: string, @CurrentUser() user: AuthUser): Promise<StreamableFile> {
    const file = await this.files.open(fileKey, user.id);
    return new StreamableFile(file.stream, {
      type: file.mimeType,
      disposition: contentDisposition(file.originalName),
      length: file.sizeBytes ?? undefined,
    });
  }
}
