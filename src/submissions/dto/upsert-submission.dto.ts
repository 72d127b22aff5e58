import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsString, MaxLength, ValidateIf } from 'class-validator';

export const SUBMISSION_CONTENT_MAX_LENGTH = 100_000;

export class UpsertSubmissionDto {
  @ApiProperty({
    type: String,
    nullable: true,
    maxLength: SUBMISSION_CONTENT_MAX_LENGTH,
    description: 'Markdown; null clears',
  })
  @IsDefined({ message: 'content is required (a string, or null to clear it)' })
  @ValidateIf((_dto, value) => value !== null)
  @MaxLength(SUBMISSION_CONTENT_MAX_LENGTH)
  @IsString()
  content: string | null;
}
