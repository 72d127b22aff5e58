import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsUUID, ValidateIf } from 'class-validator';

export const RELEASE_USER_IDS_MAX = 1000;

export class ReleaseGradesDto {
  @ApiPropertyOptional({
    type: [String],
    format: 'uuid',
    maxItems: RELEASE_USER_IDS_MAX,
    description: 'Only the submissions of these users; omitted: every graded submission of the task',
  })
  // Optional, but null is not a value: a client's null must not release every grade.
  @ValidateIf((_dto, value) => value !== undefined)
  @IsUUID('all', { each: true })
  // Listed last, checked first (the pipe stops at the first error): the size bound before the elements.
  @ArrayMaxSize(RELEASE_USER_IDS_MAX)
  @IsArray()
  userIds?: string[];
}

export class ReleaseGradesResponse {
  @ApiProperty({ description: 'Submissions whose grade this request released' })
  released: number;
}
