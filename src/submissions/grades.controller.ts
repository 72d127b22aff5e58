import { Body, Controller, HttpCode, HttpStatus, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiBody,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { type TaskAccess } from '../access/access.service';
import { CurrentAccess, TaskManagerRoute } from '../access/access-route.decorators';
import { ErrorResponse } from '../common/errors/error.response';
import { ReleaseGradesDto, ReleaseGradesResponse } from './dto/release-grades.dto';
import { GradeReleases } from './grade-releases.service';
import { IdempotentWrite } from '../idempotency/idempotent-write.decorator';

@ApiTags('submissions')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorResponse, description: 'UNAUTHORIZED: missing or invalid token' })
@Controller('tasks/:taskId/grades')
export class GradesController {
  constructor(private readonly releases: GradeReleases) {}

  @Post('release')
  @TaskManagerRoute()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary:
      'OWNER/ADMIN: release every graded, unreleased submission of the task (of userIds only, when given); ' +
      'each submitter gets GRADE_RELEASED',
  })
  @ApiBody({ type: ReleaseGradesDto })
  @ApiOkResponse({ type: ReleaseGradesResponse })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description: 'VALIDATION_ERROR: userIds not an array of at most 1000 UUIDs',
  })
  @IdempotentWrite()
  release(
    @CurrentAccess() access: TaskAccess,
    @Body() body: ReleaseGradesDto,
  ): Promise<ReleaseGradesResponse> {
    return this.releases.release(access, body.userIds);
  }
}
