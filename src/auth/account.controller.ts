import { Body, Controller, HttpCode, HttpStatus, Ip, Patch, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiOkResponse,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { UserDto } from '../users/dto/user.dto';
import { BearerToken } from './bearer-token.decorator';
import { CredentialsService } from './credentials.service';
import { ChangePasswordDto, EmailChangeDto, EmailConfirmDto } from './dto/requests.dto';
import { AuthResponseDto, MessageDto } from './dto/responses.dto';
import { EmailChangeService } from './email-change.service';
import { PasswordCheckThrottle } from '../common/throttling/throttles';
import { IdempotentWrite } from '../idempotency/idempotent-write.decorator';

/** Credentials of the logged-in user: password and e-mail address. */
@ApiTags('users')
@ApiBearerAuth()
@Controller('users/me')
export class AccountController {
  constructor(
    private readonly credentials: CredentialsService,
    private readonly emailChange: EmailChangeService,
  ) {}

  @Patch('password')
  @PasswordCheckThrottle()
  @ApiOkResponse({
    type: AuthResponseDto,
    description:
      'A new token. Every other token of the user stops working; the token of this request stays valid, so a ' +
      'client that keeps it is not logged out',
  })
  @ApiBadRequestResponse({ description: 'VALIDATION_ERROR' })
  @ApiUnauthorizedResponse({
    description: 'UNAUTHORIZED (token), or INVALID_CREDENTIALS (current password wrong)',
  })
  @ApiTooManyRequestsResponse({ description: 'RATE_LIMITED: more than 10 attempts in a minute' })
  @IdempotentWrite({ answerWithheldBecause: 'its answer is a new login token' })
  changePassword(
    @CurrentUser() user: AuthUser,
    @BearerToken() token: string,
    @Body() body: ChangePasswordDto,
  ): Promise<AuthResponseDto> {
    return this.credentials.changePassword(user.id, token, body.currentPassword, body.newPassword);
  }

  @Post('email/change')
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({ type: MessageDto, description: 'A confirmation link was e-mailed to the new address' })
  @ApiBadRequestResponse({ description: 'CAPTCHA_REQUIRED, or VALIDATION_ERROR (also: the current address)' })
  @ApiUnauthorizedResponse({ description: 'UNAUTHORIZED' })
  @ApiForbiddenResponse({ description: 'CAPTCHA_FAILED' })
  @ApiConflictResponse({ description: 'CONFLICT: the address is used by another account' })
  @ApiTooManyRequestsResponse({
    description:
      'RATE_LIMITED: more than 5 e-mails to this address, or 5 e-mail change mails of this account, in 24 hours',
  })
  @ApiServiceUnavailableResponse({ description: 'CAPTCHA_UNAVAILABLE' })
  @IdempotentWrite()
  requestEmailChange(
    @CurrentUser() user: AuthUser,
    @Body() body: EmailChangeDto,
    @Ip() ip: string,
  ): Promise<MessageDto> {
    return this.emailChange.request(user, body.email, body.captchaToken, ip);
  }

  @Post('email/confirm')
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({ type: UserDto })
  @ApiBadRequestResponse({ description: 'INVALID_TOKEN: unknown, used, expired, or issued to another user' })
  @ApiUnauthorizedResponse({ description: 'UNAUTHORIZED' })
  @ApiConflictResponse({ description: 'CONFLICT: the address was taken by another account meanwhile' })
  @IdempotentWrite()
  confirmEmailChange(@CurrentUser() user: AuthUser, @Body() body: EmailConfirmDto): Promise<UserDto> {
    return this.emailChange.confirm(user.id, body.token);
  }
}
