import { ApiProperty } from '@nestjs/swagger';
import { ClassRole } from '../entities/class-member.entity';

export class ClassSummaryResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty()
  name: string;

  @ApiProperty({ type: String, nullable: true })
  description: string | null;

  @ApiProperty({ example: '#6366f1' })
  color: string;

  @ApiProperty({ description: "True for the user's personal class" })
  isPersonal: boolean;

  @ApiProperty({ format: 'uuid' })
  ownerId: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  schoolId: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'Null for a MEMBER and for a personal class' })
  inviteCode: string | null;

  @ApiProperty({ enum: ClassRole, enumName: 'ClassRole' })
  myRole: ClassRole;

  @ApiProperty({ type: 'integer' })
  memberCount: number;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;
}

export class ClassMemberResponse {
  @ApiProperty({ format: 'uuid' })
  userId: string;

  @ApiProperty({ type: String, nullable: true, description: 'Display name' })
  nickname: string | null;

  @ApiProperty({ description: 'SHA-256 hex of the trimmed, lower-cased e-mail' })
  avatarHash: string;

  @ApiProperty({ enum: ClassRole, enumName: 'ClassRole' })
  role: ClassRole;

  @ApiProperty({ format: 'date-time' })
  joinedAt: string;
}

export class InviteCodeResponse {
  @ApiProperty({ example: 'K7QW2MZP9A' })
  inviteCode: string;
}
