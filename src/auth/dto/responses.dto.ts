import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { UserDto } from '../../users/dto/user.dto';

export class MessageDto {
  @ApiProperty()
  message: string;
}

export class AuthResponseDto {
  @ApiProperty({ description: 'Bearer token (JWT, HS256), valid 7 days' })
  token: string;

  @ApiProperty({ type: UserDto })
  user: UserDto;
}

export class VerifyTokenResponseDto {
  @ApiProperty({ description: 'true while the token exists, is unused and has not expired' })
  valid: boolean;

  @ApiPropertyOptional({ description: 'Present only when valid is true' })
  email?: string;
}
