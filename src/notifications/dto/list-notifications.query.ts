import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsOptional, IsUUID } from 'class-validator';
import { PageSize } from '../../common/validation/page-size';

const PAGE_SIZE_DEFAULT = 20;
const PAGE_SIZE_MAX = 50;

/** Query of GET /users/me/notifications. */
export class ListNotificationsQuery {
  @PageSize(PAGE_SIZE_MAX, PAGE_SIZE_DEFAULT)
  limit: number = PAGE_SIZE_DEFAULT;

  @ApiPropertyOptional({ format: 'uuid', description: 'id of the last notification of the previous page' })
  @IsOptional()
  @IsUUID('all')
  cursor?: string;

  @ApiPropertyOptional({ default: false, description: 'only notifications whose readAt is null' })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean()
  unreadOnly: boolean = false;
}
