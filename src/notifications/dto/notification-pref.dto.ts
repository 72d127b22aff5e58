import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  IsBoolean,
  isEmail,
  IsEnum,
  IsString,
  isURL,
  registerDecorator,
  ValidateIf,
  ValidationArguments,
} from 'class-validator';
import { normalizeEmail } from '../../common/validation/email';
import { trimmed } from '../../common/validation/validators';
import { NotificationChannelName } from '../entities/notification-pref.entity';

const ADDRESS_RULES: Record<
  NotificationChannelName,
  { test: (address: string) => boolean; expected: string }
> = {
  [NotificationChannelName.EMAIL]: {
    test: (address) => address.length <= 320 && isEmail(address),
    expected: 'an e-mail address',
  },
  [NotificationChannelName.WEBHOOK]: {
    // isURL passes some URLs that WHATWG URL (the HTTP client's parser) rejects, e.g. invalid punycode.
    test: (address) =>
      address.length <= 2048 &&
      isURL(address, { protocols: ['http', 'https'], require_protocol: true, require_tld: false }) &&
      URL.canParse(address),
    expected: 'an http(s) URL',
  },
  [NotificationChannelName.MESSENGER]: {
    test: (address) => /^(-?\d{1,20}|@[A-Za-z0-9_]{1,64})$/.test(address),
    expected: 'a chat id (digits, optionally negative, or @name)',
  },
};

/** `address` must suit the `channel` of the same body. */
function IsChannelAddress(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isChannelAddress',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown, args: ValidationArguments) => {
          const rule = ADDRESS_RULES[(args.object as UpsertNotificationPrefDto).channel];
          return typeof value === 'string' && rule !== undefined && rule.test(value);
        },
        defaultMessage: (args: ValidationArguments) => {
          const rule = ADDRESS_RULES[(args.object as UpsertNotificationPrefDto).channel];
          return `address must be ${rule?.expected ?? 'valid for the channel'}`;
        },
      },
    });
}

/** Body of PUT /users/me/notification-prefs: upsert of the caller's preference for one channel. */
export class UpsertNotificationPrefDto {
  @ApiProperty({ enum: NotificationChannelName, enumName: 'NotificationChannel' })
  @IsEnum(NotificationChannelName)
  channel: NotificationChannelName;

  @ApiProperty({
    description:
      'EMAIL: e-mail address; WEBHOOK: http(s) URL; MESSENGER: Telegram chat id (`-?digits` or `@name`)',
    example: 'ada@example.com',
  })
  // E-mail addresses are stored trimmed and lower-cased, like everywhere in the service.
  @Transform(({ value, obj }: { value: unknown; obj: { channel?: unknown } }) =>
    typeof value === 'string' && obj.channel === NotificationChannelName.EMAIL
      ? normalizeEmail(value)
      : trimmed(value),
  )
  @IsString()
  @IsChannelAddress()
  address: string;

  @ApiPropertyOptional({ default: true, description: 'false pauses the channel without deleting the record' })
  // Absent means true; null is not a value (the column is NOT NULL).
  @ValidateIf((_dto: unknown, value: unknown) => value !== undefined)
  @IsBoolean()
  isEnabled: boolean = true;
}

/** NotificationPref: one channel's preference of the caller. */
export class NotificationPrefDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ enum: NotificationChannelName, enumName: 'NotificationChannel' })
  channel: NotificationChannelName;

  @ApiProperty()
  address: string;

  @ApiProperty()
  isEnabled: boolean;

  @ApiPropertyOptional({
    description:
      'WEBHOOK only: `whsec_` + base64 key that signs deliveries (Standard Webhooks); shown only to its owner. ' +
      'A delivery is `POST {id, type, createdAt, data}`: `data` holds the subject (a task: `taskId, taskTitle, ' +
      'classId, className, startAt, dueAt`; otherwise `classId, className`), then the fields its type adds ' +
      '(TASK_EXTENDED: `myDueAt`); a TEST event has `data: {}`.',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  })
  secret?: string;
}
