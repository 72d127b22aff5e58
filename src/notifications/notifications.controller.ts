import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  ParseEnumPipe,
  ParseUUIDPipe,
  Patch,
  Post,
  Put,
  Query,
} from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { ErrorResponse } from '../common/errors/error.response';
import { TEST_EVENTS_PER_USER_PER_HOUR, TestEventThrottle } from '../common/throttling/throttles';
import { DeliveryLogService } from './delivery-log.service';
import { DeliveryDto } from './dto/delivery.dto';
import { NotificationChannelName } from './entities/notification-pref.entity';
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

@ApiTags('notifications')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorResponse, description: 'UNAUTHORIZED: missing or invalid token' })
@Controller('users/me/notifications')
export class NotificationsController {
  constructor(private readonly notifications: NotificationsService) {}

  @Get()
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
  constructor(
    private readonly prefs: NotificationPrefsService,
    private readonly deliveryLog: DeliveryLogService,
  ) {}

  @Get()
  @ApiOkResponse({
    type: [NotificationPrefDto],
    description:
      'EMAIL, WEBHOOK, MESSENGER in that order. EMAIL is always there: until one is saved, the account e-mail, ' +
      'enabled (where e-mail notifications then go), under a fixed id that a PUT of EMAIL keeps',
  })
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

  @Delete(':prefId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({
    summary: 'Delete a preference',
    description:
      'Without its EMAIL preference the account e-mail gets e-mail notifications again. The id of the EMAIL ' +
      'preference listed before one was saved answers 204 and changes nothing.',
  })
  @ApiNoContentResponse()
  @ApiBadRequestResponse({ type: ErrorResponse, description: 'VALIDATION_ERROR: prefId is not a UUID' })
  @ApiNotFoundResponse({
    type: ErrorResponse,
    description: "NOT_FOUND: no such preference among the caller's",
  })
  remove(@CurrentUser() user: AuthUser, @Param('prefId', new ParseUUIDPipe()) prefId: string): Promise<void> {
    return this.prefs.remove(user.id, prefId);
  }

  @Post(':channel/test')
  @HttpCode(HttpStatus.ACCEPTED)
  @TestEventThrottle()
  @ApiParam({ name: 'channel', enum: NotificationChannelName, enumName: 'NotificationChannel' })
  @ApiAcceptedResponse({
    type: DeliveryDto,
    description: 'The PENDING delivery of a TEST event (webhook body `type: "TEST"`, `data: {}`)',
  })
  @ApiBadRequestResponse({ type: ErrorResponse, description: 'VALIDATION_ERROR: unknown channel' })
  @ApiNotFoundResponse({
    type: ErrorResponse,
    description: 'NOT_FOUND: the caller has no preference for the channel',
  })
  @ApiTooManyRequestsResponse({
    type: ErrorResponse,
    description: `RATE_LIMITED: more than ${TEST_EVENTS_PER_USER_PER_HOUR} test events in an hour`,
  })
  sendTest(
    @CurrentUser() user: AuthUser,
    @Param('channel', new ParseEnumPipe(NotificationChannelName)) channel: NotificationChannelName,
  ): Promise<DeliveryDto> {
    return this.deliveryLog.sendTest(user.id, channel);
  }
}
