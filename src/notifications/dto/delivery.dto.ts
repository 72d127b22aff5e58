import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEnum, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageSize } from '../../common/validation/page-size';
import { DELIVERY_KINDS, DeliveryStatus, type DeliveryType } from '../entities/notification-delivery.entity';
import { NotificationChannelName } from '../entities/notification-pref.entity';
import { notificationTypeNames } from '../production/notification-types';

const PAGE_SIZE_DEFAULT = 20;
const PAGE_SIZE_MAX = 100;

/** Query of GET /users/me/deliveries. */
export class ListDeliveriesQuery {
  @ApiPropertyOptional({ enum: NotificationChannelName, enumName: 'NotificationChannel' })
  @IsOptional()
  @IsEnum(NotificationChannelName)
  channel?: NotificationChannelName;

  @ApiPropertyOptional({ enum: DeliveryStatus, enumName: 'DeliveryStatus' })
  @IsOptional()
  @IsEnum(DeliveryStatus)
  status?: DeliveryStatus;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page (opaque)' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  cursor?: string;

  @PageSize(PAGE_SIZE_MAX, PAGE_SIZE_DEFAULT)
  limit: number = PAGE_SIZE_DEFAULT;
}

/** Delivery: one send of one event over one channel of the caller. */
export class DeliveryDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'null for a TEST event and a DIGEST',
  })
  notificationId: string | null;

  @ApiProperty({
    enum: [...notificationTypeNames(), ...DELIVERY_KINDS],
    enumName: 'DeliveryType',
    description: "A notification's type; TEST: a test event; DIGEST: a daily digest (no notificationId)",
  })
  type: DeliveryType;

  @ApiProperty({ enum: NotificationChannelName, enumName: 'NotificationChannel' })
  channel: NotificationChannelName;

  @ApiProperty({
    description: 'Where it goes: e-mail address, webhook URL or chat id, as when it was queued',
  })
  address: string;

  @ApiProperty({
    enum: DeliveryStatus,
    enumName: 'DeliveryStatus',
    description:
      'PENDING: queued or being retried; SENT: accepted by the receiver; FAILED: attempts used up or refused ' +
      'for good; SKIPPED: out of date when its turn came (e.g. the task was deleted), or an e-mail left for ' +
      'the daily digest (lastError `DIGEST`), not sent. A PENDING EMAIL or MESSENGER delivery may be waiting ' +
      "for the end of the recipient's quiet hours (its nextAttemptAt)",
  })
  status: DeliveryStatus;

  @ApiProperty({ description: 'Attempts made so far' })
  attempts: number;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Why the last attempt failed or why it was skipped; secrets removed, at most 500 characters',
  })
  lastError: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Set while PENDING only' })
  nextAttemptAt: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  sentAt: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;
}

export class DeliveryPageDto {
  @ApiProperty({ type: [DeliveryDto], description: 'Newest first' })
  items: DeliveryDto[];

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Cursor of the next page; null on the last page',
  })
  nextCursor: string | null;
}
