import { registerDecorator, ValidationOptions } from 'class-validator';

/** ISO 8601 date-time with an explicit offset or `Z` (CONTRACT §1); a bare local time is rejected. */
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

export function isIsoTimestamp(value: unknown): value is string {
  return typeof value === 'string' && ISO_WITH_OFFSET.test(value) && !Number.isNaN(Date.parse(value));
}

export function isIanaTimezone(value: unknown): value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

function simpleDecorator(name: string, test: (value: unknown) => boolean, message: string) {
  return (options?: ValidationOptions): PropertyDecorator =>
    (target: object, propertyName: string | symbol) =>
      registerDecorator({
        name,
        target: target.constructor,
        propertyName: propertyName as string,
        options: { message: `$property ${message}`, ...options },
        validator: { validate: test },
      });
}

/** Timestamp with offset or Z; use with `@IsOptional()` / `@ValidateIf` for nullable fields. */
export const IsIsoTimestamp = simpleDecorator(
  'isIsoTimestamp',
  isIsoTimestamp,
  'must be an ISO 8601 timestamp with a time zone offset or Z',
);

export const IsIanaTimezone = simpleDecorator('isIanaTimezone', isIanaTimezone, 'must be an IANA time zone identifier');
