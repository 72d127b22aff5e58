import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, IsString, IsUUID, Length, ValidateIf } from 'class-validator';
import { timezoneAsSent, IsIanaTimezone, Trim } from '../../common/validation/validators';

/** Profile fields shared by registration and `PATCH /users/me`; null is accepted where it clears a value. */
export const NicknameField = (): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({
      type: String,
      nullable: true,
      minLength: 1,
      maxLength: 100,
      description: 'Display name',
    }),
    IsOptional(),
    Trim(),
    IsString(),
    Length(1, 100),
  );

export const TimezoneField = (): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({
      example: 'Asia/Shanghai',
      description:
        'IANA time zone, answered as sent (an old alias stays an alias, a current name stays current); default UTC',
    }),
    ValidateIf((_object, value) => value !== undefined),
    Transform(({ value }: { value: unknown }) => timezoneAsSent(value)),
    IsIanaTimezone(),
  );

export const SchoolIdField = (): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({ type: String, format: 'uuid', nullable: true, description: 'Requires studentId' }),
    IsOptional(),
    IsUUID(),
  );

export const StudentIdField = (): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({
      type: String,
      nullable: true,
      minLength: 1,
      maxLength: 64,
      description: 'Student number, unique within the school; required with schoolId',
    }),
    IsOptional(),
    Trim(),
    IsString(),
    Length(1, 64),
  );
