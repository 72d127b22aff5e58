import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  HttpStatus,
  Param,
  ParseEnumPipe,
  ParseUUIDPipe,
  Patch,
  Post,
  Put,
  Query,
  Res,
} from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiHeader,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiParam,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { AuthTicket, TicketAuth } from '../common/decorators/ticket-auth.decorator';
import { ErrorResponse } from '../common/errors/error.response';
import { isUuid } from '../common/utils/uuid';
import { TEST_EVENTS_PER_USER_PER_HOUR, TestEventThrottle } from '../common/throttling/throttles';
import { DeliveryLogService } from './delivery-log.service';
import { DeliveryDto } from './dto/delivery.dto';
import { NotificationChannelName } from './entities/notification-pref.entity';
import { ListNotificationsQuery } from './dto/list-notifications.query';
import { NotificationPrefDto, UpsertNotificationPrefDto } from './dto/notification-pref.dto';
import { NotificationStreamQuery, StreamTicketDto } from './dto/notification-stream.dto';
import {
  NotificationIdDto,
  NotificationPageDto,
  ReadAllResultDto,
  UnreadCountDto,
} from './dto/notification.response';
import { NotificationPrefsService } from './notification-prefs.service';
import { NotificationsService } from './notifications.service';
import { InboxStreams } from './stream/inbox-streams';
import { StreamTickets } from './stream/stream-tickets';
import { ApiNotModifiedResponse } from '../common/http/entity-tags';
import { IdempotentWrite } from '../idempotency/idempotent-write.decorator';

@ApiTags('notifications')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorResponse, description: 'UNAUTHORIZED: missing or invalid token' })
@Controller('users/me/notifications')
export class NotificationsController {
  constructor(
    private readonly notifications: NotificationsService,
    private readonly streams: InboxStreams,
    private readonly tickets: StreamTickets,
  ) {}

  @Get()
  @ApiNotModifiedResponse()
  @ApiOkResponse({ type: NotificationPageDto })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description: 'VALIDATION_ERROR: bad limit or unreadOnly, malformed or unknown cursor',
  })
  list(@CurrentUser() user: AuthUser, @Query() query: ListNotificationsQuery): Promise<NotificationPageDto> {
    return this.notifications.list(user.id, query);
  }

  @Post('stream-ticket')
  @ApiCreatedResponse({
    type: StreamTicketDto,
    description:
      'A ticket for the live inbox: it opens one stream at a time, and opens it again (a reconnect) until it ' +
      'expires (STREAM_TICKET_TTL_SECONDS, 300 s by default)',
  })
  @IdempotentWrite({ answerWithheldBecause: 'its answer is a stream ticket, a credential' })
  streamTicket(@CurrentUser() user: AuthUser): Promise<StreamTicketDto> {
    return this.tickets.issue(user.id);
  }

  /** The response is the stream: the service writes to it until the client leaves. */
  @Get('stream')
  @TicketAuth()
  @ApiProduces('text/event-stream')
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description: 'The id of the last notification received: the newer ones are sent first, oldest first',
  })
  @ApiOkResponse({
    description:
      'Server-Sent Events: `notification` (id: the notification id; data: Notification JSON) for each new ' +
      'inbox item, `unread` (data: `{"unreadCount": n}`) on open and after every change of the count, and ' +
      '`:` heartbeats. Auth: the bearer header, or `?ticket=` from POST /users/me/notifications/stream-ticket.',
    schema: { type: 'string' },
  })
  @ApiUnauthorizedResponse({
    type: ErrorResponse,
    description: 'UNAUTHORIZED: missing or invalid token, or an unknown, expired or revoked ticket',
  })
  @ApiTooManyRequestsResponse({
    type: ErrorResponse,
    description: 'RATE_LIMITED: the user has 5 open streams already',
  })
  async stream(
    @CurrentUser() user: AuthUser,
    // Declared so that the validation pipe accepts it; the authentication guard has checked it.
    @Query() _query: NotificationStreamQuery,
    @AuthTicket() ticket: string | undefined,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Res() response: Response,
  ): Promise<void> {
    // An id we never sent is no position in the inbox: the stream starts from now.
    await this.streams.open(user, lastEventId && isUuid(lastEventId) ? lastEventId : null, response, ticket);
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
  @IdempotentWrite()
  markRead(
    @CurrentUser() user: AuthUser,
    @Param('id', new ParseUUIDPipe()) id: string,
  ): Promise<NotificationIdDto> {
    return this.notifications.markRead(user.id, id);
  }

  @Post('read-all')
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({ type: ReadAllResultDto })
  @IdempotentWrite()
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
  @IdempotentWrite()
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
  @IdempotentWrite()
  sendTest(
    @CurrentUser() user: AuthUser,
    @Param('channel', new ParseEnumPipe(NotificationChannelName)) channel: NotificationChannelName,
  ): Promise<DeliveryDto> {
    return this.deliveryLog.sendTest(user.id, channel);
  }
}
