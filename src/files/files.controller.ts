import { applyDecorators, Controller, Get, Header, Param, Query, StreamableFile } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { FileRoute } from '../access/access-route.decorators';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { Public } from '../common/decorators/public.decorator';
import { ErrorResponse } from '../common/errors/error.response';
import { SignedFileQuery, SignedFileUrlResponse } from './dto/signed-file.dto';
import { FileDownload, FilesService } from './files.service';

/** RFC 5987 value: percent-encoded UTF-8, including the characters encodeURIComponent leaves alone. */
const encodeRfc5987 = (value: string): string =>
  encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** `attachment` with an ASCII fallback name for old clients and the exact UTF-8 name in `filename*`. */
export function contentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeRfc5987(name)}`;
}

const FILE_ACCESS = 'FORBIDDEN: a submission file of another member (MEMBER caller)';
const UNAUTHORIZED = 'UNAUTHORIZED: missing or invalid token';

/** The headers and OpenAPI answer of both ways to download a file, so they answer alike. */
const FileBytes = (): MethodDecorator =>
  applyDecorators(
    Header('X-Content-Type-Options', 'nosniff'),
    Header('Cache-Control', 'private, no-store'),
    ApiOkResponse({
      description:
        'The bytes, with the stored Content-Type, Content-Disposition (UTF-8 filename*) and Content-Length',
      content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
    }),
    ApiServiceUnavailableResponse({
      type: ErrorResponse,
      description: 'STORAGE_UNAVAILABLE: the file storage failed or did not answer',
    }),
  );

function streamable(file: FileDownload): StreamableFile {
  return new StreamableFile(file.stream, {
    type: file.mimeType,
    disposition: contentDisposition(file.originalName),
    length: file.sizeBytes ?? undefined,
  });
}

@ApiTags('files')
@Controller('files')
export class FilesController {
  constructor(private readonly files: FilesService) {}

  @Get(':fileKey')
  @FileRoute({ forbidden: FILE_ACCESS })
  @FileBytes()
  @ApiBearerAuth()
  @ApiUnauthorizedResponse({ type: ErrorResponse, description: UNAUTHORIZED })
  @ApiOperation({
    summary: 'Download an attachment',
    description:
      'Task files: anyone who can see the task. Submission files: the submitter and the class OWNER/ADMIN.',
  })
  async download(@Param('fileKey') fileKey: string, @CurrentUser() user: AuthUser): Promise<StreamableFile> {
    return streamable(await this.files.open(fileKey, user.id));
  }

  @Get(':fileKey/url')
  @FileRoute({ forbidden: FILE_ACCESS })
  @ApiBearerAuth()
  @ApiUnauthorizedResponse({ type: ErrorResponse, description: UNAUTHORIZED })
  @ApiOperation({
    summary: 'A short-lived signed URL of an attachment',
    description:
      'For inline images and links that cannot send the bearer header. Issued to whoever may download the ' +
      'file (same rules as GET /files/{fileKey}); valid for this file only, for FILE_URL_TTL_SECONDS.',
  })
  @ApiOkResponse({ type: SignedFileUrlResponse })
  signedUrl(
    @Param('fileKey') fileKey: string,
    @CurrentUser() user: AuthUser,
  ): Promise<SignedFileUrlResponse> {
    return this.files.signedUrl(fileKey, user.id);
  }

  @Get(':fileKey/content')
  @Public()
  @FileBytes()
  @ApiOperation({
    summary: 'Download an attachment through a signed URL',
    description: 'No bearer token: the signature of GET /files/{fileKey}/url is the credential.',
    security: [],
  })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description: 'VALIDATION_ERROR: expires or signature missing',
  })
  @ApiForbiddenResponse({
    type: ErrorResponse,
    description: 'FORBIDDEN: the signature is not valid for this file, or it has expired',
  })
  @ApiNotFoundResponse({ type: ErrorResponse, description: 'NOT_FOUND: the file was deleted since' })
  async downloadSigned(
    @Param('fileKey') fileKey: string,
    @Query() query: SignedFileQuery,
  ): Promise<StreamableFile> {
    return streamable(await this.files.openSigned(fileKey, query.expires, query.signature));
  }
}
