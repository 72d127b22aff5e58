import { Controller, Get, HttpCode, HttpStatus, Param, ParseUUIDPipe, Post, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { ErrorResponse } from '../common/errors/error.response';
import { REDELIVERIES_PER_USER_PER_HOUR, RedeliveryThrottle } from '../common/throttling/throttles';
import { DeliveryLogService } from './delivery-log.service';
import { DeliveryDto, DeliveryPageDto, ListDeliveriesQuery } from './dto/delivery.dto';
import { IdempotentWrite } from '../idempotency/idempotent-write.decorator';

/** The caller's delivery log. */
@ApiTags('notifications')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorResponse, description: 'UNAUTHORIZED: missing or invalid token' })
@Controller('users/me/deliveries')
export class DeliveriesController {
  constructor(private readonly log: DeliveryLogService) {}

  @Get()
  @ApiOkResponse({ type: DeliveryPageDto })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description: 'VALIDATION_ERROR: unknown channel or status, bad limit, malformed cursor',
  })
  list(@CurrentUser() user: AuthUser, @Query() query: ListDeliveriesQuery): Promise<DeliveryPageDto> {
    return this.log.list(user.id, query);
  }

  @Post(':deliveryId/redeliver')
  @HttpCode(HttpStatus.ACCEPTED)
  @RedeliveryThrottle()
  @ApiAcceptedResponse({ type: DeliveryDto, description: 'The new PENDING delivery' })
  @ApiBadRequestResponse({ type: ErrorResponse, description: 'VALIDATION_ERROR: deliveryId is not a UUID' })
  @ApiNotFoundResponse({ type: ErrorResponse, description: "NOT_FOUND: no such delivery among the caller's" })
  @ApiConflictResponse({
    type: ErrorResponse,
    description: 'CONFLICT: the delivery is PENDING or SKIPPED, or a redelivery of it is pending already',
  })
  @ApiTooManyRequestsResponse({
    type: ErrorResponse,
    description: `RATE_LIMITED: more than ${REDELIVERIES_PER_USER_PER_HOUR} redeliveries in an hour`,
  })
  @IdempotentWrite()
  redeliver(
    @CurrentUser() user: AuthUser,
    @Param('deliveryId', new ParseUUIDPipe()) deliveryId: string,
  ): Promise<DeliveryDto> {
    return this.log.redeliver(user.id, deliveryId);
  }
}
