import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Length, Matches } from 'class-validator';
import { PageSize } from '../../../../src/common/validation/page-size';
import { Trim } from '../../../../src/common/validation/validators';

export const ANNOUNCEMENT_TITLE_MAX_LENGTH = 200;
export const ANNOUNCEMENT_BODY_MAX_LENGTH = 10_000;
export const ANNOUNCEMENTS_PAGE_SIZE_DEFAULT = 20;
export const ANNOUNCEMENTS_PAGE_SIZE_MAX = 100;

export class CreateAnnouncementDto {
  @ApiProperty({
    minLength: 1,
    maxLength: ANNOUNCEMENT_TITLE_MAX_LENGTH,
    description: 'Plain text; surrounding white space is removed, and nothing may be left empty',
  })
  @Trim()
  @IsString()
  @Length(1, ANNOUNCEMENT_TITLE_MAX_LENGTH)
  title: string;

  @ApiProperty({
    minLength: 1,
    maxLength: ANNOUNCEMENT_BODY_MAX_LENGTH,
    description: 'Markdown; surrounding white space is removed, and nothing may be left empty',
  })
  @Trim()
  @IsString()
  @Length(1, ANNOUNCEMENT_BODY_MAX_LENGTH)
  body: string;
}

/** Query of GET /classes/:classId/announcements. */
export class ListAnnouncementsQuery {
  @PageSize(ANNOUNCEMENTS_PAGE_SIZE_MAX, ANNOUNCEMENTS_PAGE_SIZE_DEFAULT)
  limit: number = ANNOUNCEMENTS_PAGE_SIZE_DEFAULT;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page (opaque)' })
  @IsOptional()
  @Matches(/^[A-Za-z0-9_-]{1,100}$/, { message: 'cursor is malformed' })
  cursor?: string;
}

export class AnnouncementAuthor {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ type: String, nullable: true })
  nickname: string | null;
}

export class AnnouncementResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  classId: string;

  @ApiProperty()
  title: string;

  @ApiProperty({ description: 'Markdown' })
  body: string;

  @ApiProperty({ type: AnnouncementAuthor })
  author: AnnouncementAuthor;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;
}

export class AnnouncementPageResponse {
  @ApiProperty({ type: [AnnouncementResponse], description: 'Newest first' })
  announcements: AnnouncementResponse[];

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Cursor of the next page; null on the last page',
  })
  nextCursor: string | null;
}
