import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional } from 'class-validator';
import { IsIsoTimestamp } from '../../common/validation/validators';

/** `PUT /tasks/:taskId/extensions/:userId`: creates or replaces the member's extension. */
export class PutExtensionDto {
  @ApiProperty({ format: 'date-time', description: "The member's deadline; later than the task's dueAt" })
  @IsIsoTimestamp()
  dueAt: string;

  @ApiPropertyOptional({
    type: Boolean,
    nullable: true,
    description: "Late submissions for this member; null or absent: the task's rule",
  })
  @IsOptional()
  @IsBoolean()
  allowLateSubmission?: boolean | null;
}

/** One member's own deadline for a task. */
export class ExtensionResponse {
  @ApiProperty({ format: 'uuid' })
  taskId: string;

  @ApiProperty({ format: 'uuid' })
  userId: string;

  @ApiProperty({ type: String, nullable: true })
  nickname: string | null;

  @ApiProperty({ format: 'date-time' })
  dueAt: string;

  @ApiProperty({ type: Boolean, nullable: true, description: "null: the task's own rule" })
  allowLateSubmission: boolean | null;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  createdBy: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt: string;
}
