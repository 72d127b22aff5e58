import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  ParseUUIDPipe,
  Post,
  Query,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { type ClassAccess } from '../../../src/access/access.service';
import { ClassManagerRoute, ClassRoute, CurrentAccess } from '../../../src/access/access-route.decorators';
import { type AuthUser, CurrentUser } from '../../../src/common/decorators/current-user.decorator';
import { ErrorResponse } from '../../../src/common/errors/error.response';
import { PerUserThrottle, THROTTLE_WINDOW_MS } from '../../../src/common/throttling/throttles';
import { IdempotentWrite } from '../../../src/idempotency/idempotent-write.decorator';
import { AnnouncementsService } from './announcements.service';
import {
  ANNOUNCEMENT_BODY_MAX_LENGTH,
  ANNOUNCEMENT_TITLE_MAX_LENGTH,
  AnnouncementPageResponse,
  AnnouncementResponse,
  CreateAnnouncementDto,
  ListAnnouncementsQuery,
} from './dto/announcement.dto';

/** Each announcement notifies the whole class on every channel: one account cannot flood it. */
export const ANNOUNCEMENTS_PER_USER_PER_HOUR = 20;
const AnnouncementThrottle = (): MethodDecorator =>
  PerUserThrottle(ANNOUNCEMENTS_PER_USER_PER_HOUR, 60 * THROTTLE_WINDOW_MS);

@ApiTags('announcements')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorResponse, description: 'UNAUTHORIZED: missing or invalid token' })
@Controller('classes/:classId/announcements')
export class AnnouncementsController {
  constructor(private readonly announcements: AnnouncementsService) {}

  @Get()
  @ClassRoute()
  @ApiOperation({ summary: "The class's announcements, newest first (any member)" })
  @ApiOkResponse({ type: AnnouncementPageResponse })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description: 'VALIDATION_ERROR: bad limit or malformed cursor',
  })
  list(
    @CurrentAccess() access: ClassAccess,
    @Query() query: ListAnnouncementsQuery,
  ): Promise<AnnouncementPageResponse> {
    return this.announcements.list(access, query);
  }

  @Post()
  @ClassManagerRoute()
  @AnnouncementThrottle()
  @ApiOperation({
    summary: 'Announce to the class (OWNER/ADMIN)',
    description: 'Notifies (ANNOUNCEMENT_POSTED) every member of the class but the author.',
  })
  @ApiCreatedResponse({ type: AnnouncementResponse })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description:
      `VALIDATION_ERROR: title or body empty after trimming, title over ${ANNOUNCEMENT_TITLE_MAX_LENGTH} ` +
      `or body over ${ANNOUNCEMENT_BODY_MAX_LENGTH} characters`,
  })
  @ApiTooManyRequestsResponse({
    type: ErrorResponse,
    description: `RATE_LIMITED: more than ${ANNOUNCEMENTS_PER_USER_PER_HOUR} announcements in an hour`,
  })
  @IdempotentWrite()
  post(
    @CurrentAccess() access: ClassAccess,
    @CurrentUser() user: AuthUser,
    @Body() body: CreateAnnouncementDto,
  ): Promise<AnnouncementResponse> {
    return this.announcements.post(access, user.id, body);
  }

  @Delete(':announcementId')
  @ClassRoute({
    forbidden: 'FORBIDDEN: neither the author nor an OWNER/ADMIN',
    notFound: 'NOT_FOUND: no such announcement in this class',
  })
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Delete an announcement (its author, or an OWNER/ADMIN)' })
  @ApiParam({ name: 'announcementId', format: 'uuid' })
  @ApiNoContentResponse()
  remove(
    @CurrentAccess() access: ClassAccess,
    @CurrentUser() user: AuthUser,
    @Param('announcementId', new ParseUUIDPipe()) announcementId: string,
  ): Promise<void> {
    return this.announcements.remove(access, user.id, announcementId);
  }
}
