import { ApiProperty } from '@nestjs/swagger';
import { ErrorCode } from './app-error';

/** The body of every error answer, for OpenAPI error responses. */
export class ErrorResponse {
  @ApiProperty({ description: 'Human-readable description' })
  error: string;

  @ApiProperty({ enum: ErrorCode, enumName: 'ErrorCode' })
  code: ErrorCode;
}
