import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';

export class StreamTicketDto {
  @ApiProperty({
    description:
      'Pass it as `?ticket=` to GET /users/me/notifications/stream; it opens one stream at a time, and may ' +
      'open it again until `expiresAt` (the browser reconnecting with the same URL)',
  })
  ticket: string;

  @ApiProperty({ format: 'date-time', description: 'STREAM_TICKET_TTL_SECONDS (300) after issue' })
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
