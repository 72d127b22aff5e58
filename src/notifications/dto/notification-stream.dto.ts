import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';

export class StreamTicketDto {
  @ApiProperty({ description: 'Single use: pass it as `?ticket=` to GET /users/me/notifications/stream' })
  ticket: string;

  @ApiProperty({ format: 'date-time', description: '60 s after issue' })
  expiresAt: string;
}

export class NotificationStreamQuery {
  @ApiPropertyOptional({
    description:
      'A ticket from POST /users/me/notifications/stream-ticket, instead of the Authorization header',
  })
  @IsOptional()
  @IsString()
  ticket?: string;
}
