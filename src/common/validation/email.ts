import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsEmail, IsString, MaxLength } from 'class-validator';

export const EMAIL_MAX_LENGTH = 320;

/** E-mail addresses are compared, stored and counted trimmed and lower-cased. */
export function normalizeEmail(value: string): string {
  return value.trim().toLowerCase();
}

/** A request field holding an e-mail address: normalized, then validated. */
export const IsAccountEmail = (): PropertyDecorator =>
  applyDecorators(
    Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? normalizeEmail(value) : value)),
    IsString(),
    MaxLength(EMAIL_MAX_LENGTH),
    IsEmail(),
  );
