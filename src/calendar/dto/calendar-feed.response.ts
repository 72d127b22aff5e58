import { ApiProperty } from '@nestjs/swagger';

export class CalendarFeedDto {
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'The secret feed address `${PUBLIC_URL}/calendar/<token>.ics`: shown only by PUT, which makes it; null otherwise',
  })
  url: string | null;

  @ApiProperty()
  enabled: boolean;
}
