import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { Public } from '../common/decorators/public.decorator';
import { AppError, ErrorCode } from '../common/errors/app-error';

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
  @HealthCheck()
  @ApiOkResponse({ schema: { example: { status: 'ok' } } })
  @ApiServiceUnavailableResponse({ description: 'The database does not answer' })
  async check(): Promise<{ status: 'ok' }> {
    try {
      await this.health.check([() => this.db.pingCheck('database', { timeout: 3000 })]);
    } catch {
      throw new AppError(ErrorCode.SERVICE_UNAVAILABLE, 'Database unavailable');
    }
    return { status: 'ok' };
  }

  /** Liveness: the process answers; touches nothing else. */
  @Get('live')
  @ApiOkResponse({ schema: { example: { status: 'ok' } } })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }
}
