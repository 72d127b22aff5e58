import { Controller, Get } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { Public } from '../common/decorators/public.decorator';
import { AppError, ErrorCode } from '../common/errors/app-error';
import { ErrorResponse } from '../common/errors/error.response';

export class HealthStatusResponse {
  @ApiProperty({ enum: ['ok'] })
  status: 'ok';
}

@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
  ) {}

  /** Readiness: answers 200 only while the database answers. */
  @Get()
  // Not cached; the answer is documented below, not with terminus's own (different) body.
  @HealthCheck({ noCache: true, swaggerDocumentation: false })
  @ApiOperation({ summary: 'Readiness: 200 while the database answers', security: [] })
  @ApiOkResponse({ type: HealthStatusResponse })
  @ApiServiceUnavailableResponse({
    type: ErrorResponse,
    description: 'SERVICE_UNAVAILABLE: the database does not answer',
  })
  async check(): Promise<HealthStatusResponse> {
    try {
      await this.health.check([() => this.db.pingCheck('database', { timeout: 3000 })]);
    } catch {
      throw new AppError(ErrorCode.SERVICE_UNAVAILABLE, 'Database unavailable');
    }
    return { status: 'ok' };
  }

  /** Liveness: the process answers; touches nothing else. */
  @Get('live')
  @ApiOperation({ summary: 'Liveness: the process answers', security: [] })
  @ApiOkResponse({ type: HealthStatusResponse })
  live(): HealthStatusResponse {
    return { status: 'ok' };
  }
}
