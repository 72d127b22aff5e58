import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDefined, IsIn, IsObject, IsString, Matches, ValidateIf, ValidateNested } from 'class-validator';

/** A wall-clock time: two-digit hours (24 h) and minutes. */
const HH_MM = /^([01]\d|2[0-3]):[0-5]\d$/;
const HH_MM_MESSAGE = (field: string) => `${field} must be a time written HH:MM (24 h, two digits each)`;

export const DIGEST_FREQUENCIES = ['OFF', 'DAILY'] as const;

export class QuietHoursDto {
  @ApiProperty({ pattern: HH_MM.source, example: '22:00', description: 'Wall-clock start, HH:MM' })
  @IsString()
  @Matches(HH_MM, { message: HH_MM_MESSAGE('start') })
  start: string;

  @ApiProperty({
    pattern: HH_MM.source,
    example: '07:00',
    description: 'Wall-clock end, HH:MM; before `start`: the quiet hours span midnight; equal to it: 400',
  })
  @IsString()
  @Matches(HH_MM, { message: HH_MM_MESSAGE('end') })
  end: string;
}

/**
 * The caller's notification schedule (`GET` answers it, `PUT` replaces it whole). Times are wall-clock times
 * in the user's time zone, daylight-saving changes included.
 */
export class NotificationScheduleDto {
  @ApiProperty({
    type: QuietHoursDto,
    nullable: true,
    description:
      'While the wall clock is within them, EMAIL and MESSENGER deliveries wait (PENDING, `nextAttemptAt` ' +
      'their end); the inbox, the live stream and webhooks never wait. null: none',
  })
  @ValidateIf((dto: NotificationScheduleDto) => dto.quietHours !== null)
  @IsDefined()
  @IsObject()
  @ValidateNested()
  @Type(() => QuietHoursDto)
  quietHours: QuietHoursDto | null;

  @ApiProperty({
    enum: DIGEST_FREQUENCIES,
    enumName: 'DigestFrequency',
    description:
      'DAILY: e-mails are not sent one by one (their deliveries are SKIPPED with lastError `DIGEST`); at ' +
      '`digestAt` one DIGEST e-mail lists every notification since the previous digest. Switching to OFF ' +
      'leaves what waits for the digest in the inbox only',
  })
  @IsIn(DIGEST_FREQUENCIES)
  digest: (typeof DIGEST_FREQUENCIES)[number];

  @ApiProperty({
    pattern: HH_MM.source,
    example: '17:00',
    description: 'Wall-clock time of the daily digest',
  })
  @IsString()
  @Matches(HH_MM, { message: HH_MM_MESSAGE('digestAt') })
  digestAt: string;
}
