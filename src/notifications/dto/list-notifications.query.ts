import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsBoolean, IsInt, IsOptional, IsUUID, Max, Min } from 'class-validator';

const PAGE_SIZE_DEFAULT = 20;
const PAGE_SIZE_MAX = 50;

/** Query of GET /users/me/notifications. */
export class ListNotificationsQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: PAGE_SIZE_MAX, default: PAGE_SIZE_DEFAULT })
  @IsOptional()
  @Type(() => Number)
  @Min(1)
  @Max(PAGE_SIZE_MAX)
  // Listed last, checked first (the pipe stops at the first error): `ten` is not "greater than 50".
  @IsInt()
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
