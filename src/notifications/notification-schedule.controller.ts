import { Body, Controller, Get, Put } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { ErrorResponse } from '../common/errors/error.response';
import { IdempotentWrite } from '../idempotency/idempotent-write.decorator';
import { NotificationScheduleDto } from './dto/notification-schedule.dto';
import { NotificationScheduleService } from './notification-schedule.service';

/** The caller's quiet hours and daily digest. */
@ApiTags('notifications')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorResponse, description: 'UNAUTHORIZED: missing or invalid token' })
@Controller('users/me/notification-schedule')
export class NotificationScheduleController {
  constructor(private readonly schedules: NotificationScheduleService) {}

  @Get()
  @ApiOperation({
    summary: "The caller's notification schedule",
    description: 'Without a saved one: `{quietHours: null, digest: "OFF", digestAt: "17:00"}`',
  })
  @ApiOkResponse({ type: NotificationScheduleDto })
  get(@CurrentUser() user: AuthUser): Promise<NotificationScheduleDto> {
    return this.schedules.get(user.id);
  }

  @Put()
  @ApiOperation({
    summary: "Replace the caller's notification schedule",
    description:
      "Times are wall-clock times in the user's time zone. Deliveries waiting for quiet hours follow the new " +
      'schedule at once (and a new time zone within a scheduler run). The digest is made once per local day: ' +
      'moving `digestAt` later on a day whose digest went out makes no second one',
  })
  @ApiOkResponse({ type: NotificationScheduleDto, description: 'The schedule saved' })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description:
      'VALIDATION_ERROR: a field missing or unknown, a time not HH:MM, a digest other than OFF or DAILY, ' +
      'quiet hours starting when they end',
  })
  @IdempotentWrite()
  put(
    @CurrentUser() user: AuthUser,
    @Body() body: NotificationScheduleDto,
  ): Promise<NotificationScheduleDto> {
    return this.schedules.put(user.id, body);
  }
}
