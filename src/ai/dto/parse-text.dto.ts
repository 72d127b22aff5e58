import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, Length, ValidateIf } from 'class-validator';

export const PARSE_TEXT_MAX_LENGTH = 20_000;

export class ParseTextDto {
  @ApiProperty({
    minLength: 1,
    maxLength: PARSE_TEXT_MAX_LENGTH,
    example: 'Essay on chapter 3, due Friday 5pm. No late submissions.',
  })
  @IsString()
  @Length(1, PARSE_TEXT_MAX_LENGTH)
  text: string;
}

export class ParseDraftDto {
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: PARSE_TEXT_MAX_LENGTH,
    description: "Text to parse; when omitted, the draft's stored sourceText",
  })
  // Omitted means the stored sourceText; null is no text (400), not a way to clear it.
  @ValidateIf((_dto: unknown, value: unknown) => value !== undefined)
  @IsString()
  @Length(1, PARSE_TEXT_MAX_LENGTH)
  text?: string;
}
