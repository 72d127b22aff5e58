import { Body, Controller, HttpCode, HttpStatus, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { PARSE_LIMITED, ParseThrottle } from '../common/throttling/throttles';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { ErrorResponse } from '../common/errors/error.response';
import { AiService } from './ai.service';
import { ParseTextDto } from './dto/parse-text.dto';
import { ParseResultResponse } from './dto/parse-result.response';
import { IdempotentWrite } from '../idempotency/idempotent-write.decorator';

@ApiTags('tasks')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorResponse, description: 'Missing or invalid token' })
@Controller('tasks')
export class AiController {
  constructor(private readonly ai: AiService) {}

  @Post('parse')
  @ParseThrottle()
  @HttpCode(HttpStatus.OK)
  @ApiTooManyRequestsResponse({ type: ErrorResponse, description: PARSE_LIMITED })
  @ApiOperation({
    summary: 'Parse free text into suggested task fields; creates nothing',
    description:
      "Relative dates are read in the caller's time zone. A model failure answers 200 with every field null.",
  })
  @ApiOkResponse({ type: ParseResultResponse })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description: 'text missing, empty or longer than 20,000 characters',
  })
  @IdempotentWrite()
  parse(@Body() body: ParseTextDto, @CurrentUser() user: AuthUser): Promise<ParseResultResponse> {
    return this.ai.parseText(body.text, user);
  }
}
