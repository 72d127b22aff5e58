import {
  Body,
  Controller,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  ParseUUIDPipe,
  Patch,
  Post,
  Put,
  Query,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { ErrorResponse } from '../common/errors/error.response';
import { ListNotificationsQuery } from './dto/list-notifications.query';
import { NotificationPrefDto, UpsertNotificationPrefDto } from './dto/notification-pref.dto';
import {
  NotificationIdDto,
  NotificationPageDto,
  ReadAllResultDto,
  UnreadCountDto,
} from './dto/notification.response';
import { NotificationPrefsService } from './notification-prefs.service';
import { NotificationsService } from './notifications.service';
import { EntityTagged } from '../common/http/entity-tags';

@ApiTags('notifications')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorResponse, description: 'UNAUTHORIZED: missing or invalid token' })
@Controller('users/me/notifications')
export class NotificationsController {
  constructor(private readonly notifications: NotificationsService) {}

  @Get()
  @EntityTagged()
  @ApiOkResponse({ type: NotificationPageDto })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description: 'VALIDATION_ERROR: bad limit or unreadOnly, malformed or unknown cursor',
  })
  list(@CurrentUser() user: AuthUser, @Query() query: ListNotificationsQuery): Promise<NotificationPageDto> {
    return this.notifications.list(user.id, query);
  }

  @Get('unread-count')
  @ApiOkResponse({ type: UnreadCountDto })
  unreadCount(@CurrentUser() user: AuthUser): Promise<UnreadCountDto> {
    return this.notifications.unreadCount(user.id);
  }

  @Patch(':id/read')
  @ApiOkResponse({ type: NotificationIdDto })
  @ApiBadRequestResponse({ type: ErrorResponse, description: 'VALIDATION_ERROR: id is not a UUID' })
  @ApiNotFoundResponse({
    type: ErrorResponse,
    description: "NOT_FOUND: no such notification among the caller's",
  })
  markRead(
    @CurrentUser() user: AuthUser,
    @Param('id', new ParseUUIDPipe()) id: string,
  ): Promise<NotificationIdDto> {
    return this.notifications.markRead(user.id, id);
  }

  @Post('read-all')
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({ type: ReadAllResultDto })
  markAllRead(@CurrentUser() user: AuthUser): Promise<ReadAllResultDto> {
    return this.notifications.markAllRead(user.id);
  }
}

@ApiTags('notifications')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorResponse, description: 'UNAUTHORIZED: missing or invalid token' })
@Controller('users/me/notification-prefs')
export class NotificationPrefsController {
  constructor(private readonly prefs: NotificationPrefsService) {}

  @Get()
  @ApiOkResponse({ type: [NotificationPrefDto] })
  list(@CurrentUser() user: AuthUser): Promise<NotificationPrefDto[]> {
    return this.prefs.list(user.id);
  }

  @Put()
  @ApiOkResponse({ type: NotificationPrefDto, description: 'The created or updated preference' })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description: 'VALIDATION_ERROR: unknown channel or address unfit for it',
  })
  upsert(
    @CurrentUser() user: AuthUser,
    @Body() body: UpsertNotificationPrefDto,
  ): Promise<NotificationPrefDto> {
    return this.prefs.upsert(user.id, body);
  }
}
