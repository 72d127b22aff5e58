import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { IsAccountEmail } from '../../common/validation/email';
import { IsPassword, PASSWORD_MAX_BYTES, PASSWORD_MIN_CHARACTERS } from '../../common/validation/validators';
import { NicknameField, SchoolIdField, StudentIdField, TimezoneField } from '../../users/dto/profile-fields';
import { TokenPurpose } from '../entities/auth-token.entity';

const PASSWORD_DOC = {
  minLength: PASSWORD_MIN_CHARACTERS,
  description: `At least ${PASSWORD_MIN_CHARACTERS} characters and at most ${PASSWORD_MAX_BYTES} bytes (UTF-8)`,
};
const EMAIL_DOC = { example: 'ada@example.com', description: 'Trimmed and lower-cased' };
/** Long enough for every e-mailed token (43 characters) and short enough to refuse junk early. */
const TOKEN_MAX_LENGTH = 200;

const TokenField = (description: string): PropertyDecorator =>
  applyDecorators(ApiProperty({ description }), IsString(), Length(1, TOKEN_MAX_LENGTH));

const CaptchaTokenField = (): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({
      description: 'Token of a solved challenge; required when the deployment enables CAPTCHA',
    }),
    IsOptional(),
    IsString(),
    MaxLength(4096),
  );

export class RegisterDto {
  @ApiProperty(EMAIL_DOC)
  @IsAccountEmail()
  email: string;

  @CaptchaTokenField()
  captchaToken?: string;
}

export class CompleteRegistrationDto {
  @TokenField('Verification token from the e-mail')
  token: string;

  @ApiProperty(PASSWORD_DOC)
  @IsPassword()
  password: string;

  @NicknameField()
  nickname?: string | null;

  @SchoolIdField()
  schoolId?: string | null;

  @StudentIdField()
  studentId?: string | null;

  @TimezoneField()
  timezone?: string;
}

export class LoginDto {
  @ApiProperty(EMAIL_DOC)
  @IsAccountEmail()
  email: string;

  /** Not checked against the password rules: a login only compares. */
  @ApiProperty()
  @IsString()
  @MaxLength(1024)
  password: string;
}

export class VerifyTokenQuery {
  @TokenField('The token to check')
  token: string;

  @ApiProperty({ enum: [TokenPurpose.REGISTRATION, TokenPurpose.PASSWORD_RESET] })
  @IsIn([TokenPurpose.REGISTRATION, TokenPurpose.PASSWORD_RESET])
  purpose: TokenPurpose.REGISTRATION | TokenPurpose.PASSWORD_RESET;
}

export class ForgotPasswordDto {
  @ApiProperty(EMAIL_DOC)
  @IsAccountEmail()
  email: string;
}

export class ResetPasswordDto {
  @TokenField('Reset token from the e-mail')
  token: string;

  @ApiProperty(PASSWORD_DOC)
  @IsPassword()
  password: string;
}

export class ChangePasswordDto {
  @ApiProperty()
  @IsString()
  @MaxLength(1024)
  currentPassword: string;

  @ApiProperty(PASSWORD_DOC)
  @IsPassword()
  newPassword: string;
}

export class EmailChangeDto {
  @ApiProperty({ ...EMAIL_DOC, description: 'The new address; trimmed and lower-cased' })
  @IsAccountEmail()
  email: string;

  @CaptchaTokenField()
  captchaToken?: string;
}

export class EmailConfirmDto {
  @TokenField('Token from the confirmation link')
  token: string;
}
