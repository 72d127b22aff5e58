import { Controller, Delete, Get, HttpCode, HttpStatus, Param, Put, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiHeader,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { Public } from '../common/decorators/public.decorator';
import { ErrorResponse } from '../common/errors/error.response';
import { CalendarFeeds } from './calendar-feeds.service';
import { CalendarFeedDto } from './dto/calendar-feed.response';
import { IdempotentWrite } from '../idempotency/idempotent-write.decorator';

@ApiTags('calendar')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorResponse, description: 'UNAUTHORIZED: missing or invalid token' })
@Controller('users/me/calendar-feed')
export class CalendarFeedController {
  constructor(private readonly feeds: CalendarFeeds) {}

  @Put()
  @ApiOperation({ summary: 'A new secret feed address; the previous one stops working' })
  @ApiOkResponse({ type: CalendarFeedDto, description: 'The address, shown only here' })
  @IdempotentWrite({ answerWithheldBecause: "its answer is the feed's secret address" })
  enable(@CurrentUser() user: AuthUser): Promise<CalendarFeedDto> {
    return this.feeds.enable(user.id);
  }

  @Get()
  @ApiOkResponse({
    type: CalendarFeedDto,
    description: '`url` is always null: the address is shown only by PUT',
  })
  status(@CurrentUser() user: AuthUser): Promise<CalendarFeedDto> {
    return this.feeds.status(user.id);
  }

  @Delete()
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Turns the feed off: its address answers 404' })
  @ApiNoContentResponse({ description: 'Off (also when it was off)' })
  disable(@CurrentUser() user: AuthUser): Promise<void> {
    return this.feeds.disable(user.id);
  }
}

@ApiTags('calendar')
@Controller('calendar')
export class CalendarController {
  constructor(private readonly feeds: CalendarFeeds) {}

  /** No login token: the secret address is the credential. */
  @Get(':token.ics')
  @Public()
  @ApiOperation({ summary: "RFC 5545 calendar of the user's task deadlines (calendar apps subscribe to it)" })
  @ApiParam({ name: 'token', description: 'The secret of the address PUT /users/me/calendar-feed made' })
  @ApiHeader({ name: 'If-None-Match', required: false })
  @ApiProduces('text/calendar')
  @ApiOkResponse({ description: 'text/calendar; charset=utf-8, with an ETag', schema: { type: 'string' } })
  @ApiResponse({ status: HttpStatus.NOT_MODIFIED, description: 'If-None-Match names the current ETag' })
  @ApiNotFoundResponse({ type: ErrorResponse, description: 'NOT_FOUND: unknown or revoked address' })
  async feed(@Param('token') token: string, @Res({ passthrough: true }) response: Response): Promise<string> {
    const { body, etag } = await this.feeds.render(token);
    response.setHeader('Content-Type', 'text/calendar; charset=utf-8');
    response.setHeader('Cache-Control', 'private, no-cache');
    // `tagAnswer` answers 304 without the body when If-None-Match names this tag.
    response.setHeader('ETag', etag);
    return body;
  }
}
