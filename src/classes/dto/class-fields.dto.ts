import { ApiProperty, ApiPropertyOptional, OmitType, PartialType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  IsIn,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Matches,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import { Trim } from '../../common/validation/validators';
import { ClassRole } from '../entities/class-member.entity';

/** Colors are stored lower-case, so `#AABBCC` and `#aabbcc` are the same color. */
const lowerCase = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' ? value.toLowerCase() : value;

export class CreateClassDto {
  @ApiProperty({ minLength: 1, maxLength: 100, description: 'Trimmed; must not be blank' })
  @Trim()
  @IsString()
  @Length(1, 100)
  name: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 2000 })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string | null;

  @ApiPropertyOptional({ example: '#6366f1', description: 'Hex color `#rrggbb`; default `#6366f1`' })
  @ValidateIf((_dto: unknown, value: unknown) => value !== undefined)
  @Transform(lowerCase)
  @IsString()
  @Matches(/^#[0-9a-f]{6}$/, { message: 'color must be a hex color like #rrggbb' })
  color?: string;

  @ApiPropertyOptional({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'When set, only users of this school can join by invite code',
  })
  @IsOptional()
  @IsUUID()
  schoolId?: string | null;
}

/** Every field optional; `description: null` clears it, `name` and `color` cannot be null. */
export class UpdateClassDto extends PartialType(OmitType(CreateClassDto, ['schoolId'] as const), {
  skipNullProperties: false,
}) {}

export class JoinClassDto {
  @ApiProperty({ example: 'K7QW2MZP9A', description: 'Trimmed, case-insensitive' })
  @Trim()
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  inviteCode: string;
}

export class ChangeMemberRoleDto {
  @ApiProperty({ enum: [ClassRole.ADMIN, ClassRole.MEMBER], description: 'OWNER is set only by a transfer' })
  @IsIn([ClassRole.ADMIN, ClassRole.MEMBER])
  role: ClassRole.ADMIN | ClassRole.MEMBER;
}

export class TransferOwnershipDto {
  @ApiProperty({
    format: 'uuid',
    description: 'A member of the class; becomes OWNER, the caller becomes ADMIN',
  })
  @IsUUID()
  newOwnerId: string;
}
