import { Module } from '@nestjs/common';
import { AppConfig } from '../../config/config';
import { APP_CONFIG } from '../../config/config.module';
import { Metrics } from './metrics';
import { MetricsServer } from './metrics-server';

/**
 * The app's one `Metrics` (Nest makes one instance of a module, so every importer shares it) and the server of
 * METRICS_PORT. Imported by the modules that record (their jobs, the outbox, uploads, the outage) and by the
 * composition root, whose TypeORM pool reports to it.
 */
@Module({
  providers: [
    { provide: Metrics, useFactory: (config: AppConfig) => new Metrics(config), inject: [APP_CONFIG] },
    MetricsServer,
  ],
  exports: [Metrics],
})
export class MetricsModule {}
