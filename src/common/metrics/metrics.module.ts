import { DynamicModule, Global, Module } from '@nestjs/common';
import { Metrics } from './metrics';
import { MetricsServer } from './metrics-server';

/** The app's one `Metrics`, made by the composition root (its pool observer is needed before any module). */
@Global()
@Module({})
export class MetricsModule {
  static forRoot(metrics: Metrics): DynamicModule {
    return {
      module: MetricsModule,
      providers: [{ provide: Metrics, useValue: metrics }, MetricsServer],
      exports: [Metrics, MetricsServer],
    };
  }
}
