import { Controller, Delete, HttpCode, HttpStatus } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiNoContentResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { type AttachmentAccess } from '../access/access.service';
import { AttachmentRoute, CurrentAccess } from '../access/access-route.decorators';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { ErrorResponse } from '../common/errors/error.response';
import { AttachmentsService } from './attachments.service';

@ApiTags('files')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorResponse, description: 'UNAUTHORIZED: missing or invalid token' })
@Controller('files/attachments')
export class AttachmentsController {
  constructor(private readonly attachments: AttachmentsService) {}

  @Delete(':attachmentId')
  @AttachmentRoute()
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({
    summary: 'Remove a task or submission attachment and its file',
    description:
      'A task attachment: OWNER/ADMIN of the class. A submission attachment: its submitter, under the late ' +
      'and lock rules of DELETE /tasks/{taskId}/submissions/me/attachments/{attachmentId}.',
  })
  @ApiNoContentResponse()
  remove(@CurrentAccess() access: AttachmentAccess, @CurrentUser() user: AuthUser): Promise<void> {
    return this.attachments.remove(access, user.id);
  }
}
