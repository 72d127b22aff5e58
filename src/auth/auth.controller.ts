import { Body, Controller, Get, HttpCode, HttpStatus, Ip, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { Public } from '../common/decorators/public.decorator';
import { CredentialsService } from './credentials.service';
import {
  CompleteRegistrationDto,
  ForgotPasswordDto,
  LoginDto,
  RegisterDto,
  ResetPasswordDto,
  VerifyTokenQuery,
} from './dto/requests.dto';
import { AuthResponseDto, MessageDto, VerifyTokenResponseDto } from './dto/responses.dto';
import { RegistrationService } from './registration.service';
import { AccountRouteThrottle, LoginThrottle } from '../common/throttling/throttles';

const RATE_LIMITED = { description: 'RATE_LIMITED: too many requests; see Retry-After (seconds)' };
const INVALID_TOKEN = {
  description: 'INVALID_TOKEN: unknown, used, expired or of another purpose; or VALIDATION_ERROR',
};

/** The account routes called without a login token. */
@ApiTags('auth')
@Public()
@Controller('auth')
export class AuthController {
  constructor(
    private readonly registration: RegistrationService,
    private readonly credentials: CredentialsService,
  ) {}

  @Post('register')
  @HttpCode(HttpStatus.OK)
  @AccountRouteThrottle()
  @ApiOperation({ summary: 'Step 1 of registration: e-mails a verification link', security: [] })
  @ApiOkResponse({ type: MessageDto })
  @ApiBadRequestResponse({ description: 'CAPTCHA_REQUIRED, or VALIDATION_ERROR' })
  @ApiForbiddenResponse({ description: 'REGISTRATION_CLOSED, or CAPTCHA_FAILED' })
  @ApiConflictResponse({ description: 'CONFLICT: the address is already registered' })
  @ApiTooManyRequestsResponse({
    description: 'RATE_LIMITED: more than 5 e-mails to this address in 24 hours',
  })
  @ApiServiceUnavailableResponse({ description: 'CAPTCHA_UNAVAILABLE' })
  register(@Body() body: RegisterDto, @Ip() ip: string): Promise<MessageDto> {
    return this.registration.register(body.email, body.captchaToken, ip);
  }

  @Post('register/complete')
  @AccountRouteThrottle()
  @ApiOperation({ summary: 'Step 2: creates the account and its personal class, and logs in', security: [] })
  @ApiCreatedResponse({ type: AuthResponseDto })
  @ApiBadRequestResponse({
    description: `${INVALID_TOKEN.description}; unknown schoolId; schoolId without studentId`,
  })
  @ApiForbiddenResponse({ description: 'REGISTRATION_CLOSED' })
  @ApiConflictResponse({
    description: 'CONFLICT: student number taken in that school, or address registered meanwhile',
  })
  @ApiTooManyRequestsResponse(RATE_LIMITED)
  completeRegistration(@Body() body: CompleteRegistrationDto): Promise<AuthResponseDto> {
    return this.registration.complete(body);
  }

  @Post('login')
  @HttpCode(HttpStatus.OK)
  @LoginThrottle()
  @ApiOperation({ summary: 'Log in with e-mail and password', security: [] })
  @ApiOkResponse({ type: AuthResponseDto })
  @ApiBadRequestResponse({ description: 'VALIDATION_ERROR' })
  @ApiUnauthorizedResponse({ description: 'INVALID_CREDENTIALS' })
  @ApiForbiddenResponse({ description: 'ACCOUNT_DEACTIVATED' })
  @ApiTooManyRequestsResponse(RATE_LIMITED)
  login(@Body() body: LoginDto): Promise<AuthResponseDto> {
    return this.credentials.login(body.email, body.password);
  }

  @Get('verify-token')
  @AccountRouteThrottle()
  @ApiOperation({ summary: 'Tells whether an e-mailed token is usable; never uses it', security: [] })
  @ApiOkResponse({ type: VerifyTokenResponseDto })
  @ApiBadRequestResponse({ description: 'VALIDATION_ERROR' })
  @ApiTooManyRequestsResponse(RATE_LIMITED)
  verifyToken(@Query() query: VerifyTokenQuery): Promise<VerifyTokenResponseDto> {
    return this.credentials.verifyToken(query.token, query.purpose);
  }

  @Post('forgot-password')
  @HttpCode(HttpStatus.OK)
  @AccountRouteThrottle()
  @ApiOperation({ summary: 'E-mails a reset link; the same answer for any address', security: [] })
  @ApiOkResponse({ type: MessageDto })
  @ApiBadRequestResponse({ description: 'VALIDATION_ERROR' })
  @ApiTooManyRequestsResponse({
    description: 'RATE_LIMITED: more than 5 e-mails to this address in 24 hours',
  })
  forgotPassword(@Body() body: ForgotPasswordDto): Promise<MessageDto> {
    return this.credentials.forgotPassword(body.email);
  }

  @Post('reset-password')
  @HttpCode(HttpStatus.OK)
  @AccountRouteThrottle()
  @ApiOperation({ summary: 'Sets a new password with a reset token, and logs in', security: [] })
  @ApiOkResponse({ type: AuthResponseDto })
  @ApiBadRequestResponse(INVALID_TOKEN)
  @ApiForbiddenResponse({ description: 'ACCOUNT_DEACTIVATED' })
  @ApiTooManyRequestsResponse(RATE_LIMITED)
  resetPassword(@Body() body: ResetPasswordDto): Promise<AuthResponseDto> {
    return this.credentials.resetPassword(body.token, body.password);
  }
}
