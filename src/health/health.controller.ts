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
import { FileStorage } from '../files/file-storage';

export class HealthStatusResponse {
  @ApiProperty({ enum: ['ok'] })
  status: 'ok';
}

export class ReadinessResponse extends HealthStatusResponse {
  @ApiProperty({
    enum: ['ok', 'unavailable'],
    description: 'The file storage (disk or bucket), checked at most every 10 s; it does not fail readiness',
  })
  storage: 'ok' | 'unavailable';
}

@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly storage: FileStorage,
  ) {}

  /**
   * Readiness: answers 200 only while the database answers. A store outage is reported, not a reason to
   * leave the load balancer: every route but the file ones still works.
   */
  @Get()
  // Not cached; the answer is documented below, not with terminus's own (different) body.
  @HealthCheck({ noCache: true, swaggerDocumentation: false })
  @ApiOperation({ summary: 'Readiness: 200 while the database answers', security: [] })
  @ApiOkResponse({ type: ReadinessResponse })
  @ApiServiceUnavailableResponse({
    type: ErrorResponse,
    description: 'SERVICE_UNAVAILABLE: the database does not answer',
  })
  async check(): Promise<ReadinessResponse> {
    try {
      await this.health.check([() => this.db.pingCheck('database', { timeout: 3000 })]);
    } catch {
      throw new AppError(ErrorCode.SERVICE_UNAVAILABLE, 'Database unavailable');
    }
    return { status: 'ok', storage: (await this.storage.available()) ? 'ok' : 'unavailable' };
  }

  /** Liveness: the process answers; touches nothing else. */
  @Get('live')
  @ApiOperation({ summary: 'Liveness: the process answers', security: [] })
  @ApiOkResponse({ type: HealthStatusResponse })
  live(): HealthStatusResponse {
    return { status: 'ok' };
  }
}
