import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { Trim } from '../../common/validation/validators';

export class SchoolDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty()
  name: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;
}

export class ListSchoolsQuery {
  @ApiPropertyOptional({ description: 'Only schools whose name contains this text (case-insensitive)' })
  @IsOptional()
  @Trim()
  @IsString()
  @MaxLength(200)
  q?: string;
}
