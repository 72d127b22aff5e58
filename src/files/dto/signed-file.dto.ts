import { ApiProperty } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';

/** Answer of GET /files/:fileKey/url. */
export class SignedFileUrlResponse {
  @ApiProperty({
    description:
      'Absolute URL (from PUBLIC_URL) that serves this one file without the bearer header until expiresAt',
    example: 'http://localhost:3000/files/Qm9vay1rZXk/content?expires=1767225600&signature=…',
  })
  url: string;

  @ApiProperty({ format: 'date-time' })
  expiresAt: string;
}

/** Query of a signed file URL; a value that is not this service's signature answers 403, not 400. */
export class SignedFileQuery {
  @ApiProperty({ description: 'Expiry, Unix seconds' })
  @IsString()
  @MaxLength(20)
  expires: string;

  @ApiProperty({ description: 'base64url HMAC-SHA256 of the file key and the expiry' })
  @IsString()
  @MaxLength(100)
  signature: string;
}
