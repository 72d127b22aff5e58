import { Controller, Get, Query } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/decorators/public.decorator';
import { ListSchoolsQuery, SchoolDto } from './dto/school.dto';
import { SCHOOL_LIST_LIMIT, SchoolsService } from './schools.service';

@ApiTags('schools')
@Controller('schools')
export class SchoolsController {
  constructor(private readonly schools: SchoolsService) {}

  @Public()
  @Get()
  @ApiOperation({
    summary: `Schools sorted by name (at most ${SCHOOL_LIST_LIMIT}); no token needed`,
    security: [],
  })
  @ApiOkResponse({ type: SchoolDto, isArray: true })
  @ApiBadRequestResponse({ description: 'VALIDATION_ERROR: q longer than 200 characters' })
  list(@Query() query: ListSchoolsQuery): Promise<SchoolDto[]> {
    return this.schools.list(query.q);
  }
}
