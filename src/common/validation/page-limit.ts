import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

/**
 * `limit` of a page query: a whole number from 1 to `max`, optional (the property's initialiser is the
 * default, `fallback` documents it). The integer check runs first (the pipe stops at the first error): `ten`
 * is not "greater than max".
 */
export const PageLimit = (fallback: number, max: number): PropertyDecorator =>
  // applyDecorators applies in list order, the reverse of a decorator stack.
  applyDecorators(
    IsInt(),
    Max(max),
    Min(1),
    Type(() => Number),
    IsOptional(),
    ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: max, default: fallback }),
  );
