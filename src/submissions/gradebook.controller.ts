import { Controller, Get, Param, ParseUUIDPipe, Query, Res, StreamableFile } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { type ClassAccess } from '../access/access.service';
import { MANAGER_ROLES } from '../access/class-roles';
import { ClassManagerRoute, ClassRoute, CurrentAccess } from '../access/access-route.decorators';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { ErrorResponse } from '../common/errors/error.response';
import { ApiNotModifiedResponse } from '../common/http/entity-tags';
import { GradebookQuery, GradebookResponse, OwnGradebookResponse } from './dto/gradebook.dto';
import { GradebookService } from './gradebook.service';

@ApiTags('gradebook')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorResponse, description: 'UNAUTHORIZED: missing or invalid token' })
@Controller('classes/:classId')
export class GradebookController {
  constructor(private readonly gradebook: GradebookService) {}

  // The page's one statement decides access (one round trip per page).
  @Get('gradebook')
  @ClassRoute({ inStatement: true, roles: MANAGER_ROLES })
  @ApiNotModifiedResponse()
  @ApiOperation({
    summary: 'OWNER/ADMIN: the class gradebook, MEMBERs by published tasks, a page of rows at a time',
    description:
      "Unreleased grades included. Each cell judges MISSING and lateness by the member's own deadline.",
  })
  @ApiOkResponse({ type: GradebookResponse })
  @ApiBadRequestResponse({ type: ErrorResponse, description: 'VALIDATION_ERROR: malformed cursor or limit' })
  page(
    @Param('classId', new ParseUUIDPipe()) classId: string,
    @CurrentUser() user: AuthUser,
    @Query() query: GradebookQuery,
  ): Promise<GradebookResponse> {
    return this.gradebook.page(classId, user.id, query);
  }

  @Get('gradebook.csv')
  @ClassManagerRoute()
  @ApiOperation({
    summary: 'OWNER/ADMIN: the gradebook as CSV, one line per MEMBER, streamed',
    description:
      'Columns `Nickname,Student number`, then one per task (its title): the score, else `missing` past the ' +
      "member's deadline with nothing submitted, else `late` for a late submission, else empty. UTF-8 with BOM, " +
      "CRLF, RFC 4180 quoting; a cell starting with =, +, -, @, tab or carriage return is prefixed with '.",
  })
  @ApiProduces('text/csv')
  @ApiOkResponse({ description: 'UTF-8 CSV with BOM and CRLF', schema: { type: 'string' } })
  csv(
    @CurrentAccess() access: ClassAccess,
    @Res({ passthrough: true }) response: Response,
  ): Promise<StreamableFile> {
    return this.gradebook.csvExport(access, response);
  }

  @Get('gradebook/me')
  @ClassRoute({ inStatement: true })
  @ApiNotModifiedResponse()
  @ApiOperation({
    summary: "Any member (OWNER and ADMIN too): the caller's own gradebook row, released grades only",
  })
  @ApiOkResponse({ type: OwnGradebookResponse })
  mine(
    @Param('classId', new ParseUUIDPipe()) classId: string,
    @CurrentUser() user: AuthUser,
  ): Promise<OwnGradebookResponse> {
    return this.gradebook.mine(classId, user.id);
  }
}
