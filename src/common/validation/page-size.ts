import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

/** The `limit` of a paginated list query: an integer from 1 to `max`, `defaultSize` when absent. */
export const PageSize = (max: number, defaultSize: number): PropertyDecorator =>
  applyDecorators(
    // Registered first, so checked and reported first (the pipe stops at the first error): `ten` is not
    // "greater than max".
    IsInt(),
    Max(max),
    Min(1),
    Type(() => Number),
    IsOptional(),
    ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: max, default: defaultSize }),
  );
