import { Transform } from 'class-transformer';
import { registerDecorator, ValidationOptions } from 'class-validator';

/** ISO 8601 date-time with an explicit offset or `Z`; a bare local time is rejected. */
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * Instants whose UTC year has four digits, 0001 to 9999: every timestamp is answered as
 * `YYYY-MM-DDTHH:mm:ss.sssZ`, which `toISOString` and PostgreSQL cannot write for others
 * (year 0 would come back as 0001).
 */
const EARLIEST_INSTANT = Date.parse('0001-01-01T00:00:00.000Z');
const LATEST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

export function isIsoTimestamp(value: unknown): value is string {
  if (typeof value !== 'string' || !ISO_WITH_OFFSET.test(value)) return false;
  const instant = Date.parse(value);
  return instant >= EARLIEST_INSTANT && instant <= LATEST_INSTANT && isCalendarDate(value);
}

/** Date.parse rolls a day past the month's end over (`2030-02-30` → March 2); ISO 8601 has no such day. */
function isCalendarDate(value: string): boolean {
  const [year, month, day] = value.slice(0, 10).split('-').map(Number);
  const lastDay = new Date(0);
  lastDay.setUTCFullYear(year, month, 0);
  return day <= lastDay.getUTCDate();
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

export const IsIanaTimezone = simpleDecorator(
  'isIanaTimezone',
  isIanaTimezone,
  'must be an IANA time zone identifier',
);

/** bcrypt reads only the first 72 bytes of a password. */
export const PASSWORD_MAX_BYTES = 72;
export const PASSWORD_MIN_CHARACTERS = 8;

/** At least 8 characters and at most 72 UTF-8 bytes (bcrypt's limit). */
export function isPassword(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    [...value].length >= PASSWORD_MIN_CHARACTERS &&
    Buffer.byteLength(value, 'utf8') <= PASSWORD_MAX_BYTES
  );
}

export const IsPassword = simpleDecorator(
  'isPassword',
  isPassword,
  `must be at least ${PASSWORD_MIN_CHARACTERS} characters and at most ${PASSWORD_MAX_BYTES} bytes long`,
);

/**
 * The runtime's zones by lower-case name, to mend only the letter case of a name sent (`asia/shanghai`).
 * Its ICU data lists one canonical name per zone, which can be an old alias (`Asia/Calcutta`), and resolving a
 * name through it renames the zone, so a valid name is otherwise kept as sent (`Asia/Kolkata`, `Etc/UTC`).
 */
const RUNTIME_ZONE_SPELLINGS = new Map(
  Intl.supportedValuesOf('timeZone').map((zone) => [zone.toLowerCase(), zone] as const),
);

/** A valid IANA zone name as it was sent, its letter case mended when the runtime lists it; other values unchanged. */
export function timezoneAsSent(value: unknown): unknown {
  return isIanaTimezone(value) ? (RUNTIME_ZONE_SPELLINGS.get(value.toLowerCase()) ?? value) : value;
}

/** A string without its surrounding white space; any other value unchanged (validation judges it). */
export const trimmed = (value: unknown): unknown => (typeof value === 'string' ? value.trim() : value);

/** Trims a string field before it is validated. */
export const Trim = (): PropertyDecorator => Transform(({ value }: { value: unknown }) => trimmed(value));

/**
 * A finite number with at most `places` decimals, judged on the value itself: class-validator's
 * `maxDecimalPlaces` splits the number's text at '.', and throws on a tiny value written without one (`1e-7`).
 */
export function hasAtMostDecimals(value: unknown, places: number): value is number {
  return typeof value === 'number' && Number.isFinite(value) && Number(value.toFixed(places)) === value;
}

export const MaxDecimals = (places: number, options?: ValidationOptions): PropertyDecorator =>
  simpleDecorator(
    'maxDecimals',
    (value) => hasAtMostDecimals(value, places),
    `must have at most ${places} decimals`,
  )(options);
