import { ApiProperty } from '@nestjs/swagger';

/** The User resource. Never a password hash or token. */
export class UserDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'ada@example.com' })
  email: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Display name; clients show the e-mail when null',
  })
  nickname: string | null;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  schoolId: string | null;

  @ApiProperty({ type: String, nullable: true })
  schoolName: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'Student number, unique within the school' })
  studentId: string | null;

  @ApiProperty({ example: 'Europe/Berlin', description: 'IANA time zone' })
  timezone: string;

  @ApiProperty({ description: 'false: the account is deactivated' })
  isActive: boolean;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;
}
