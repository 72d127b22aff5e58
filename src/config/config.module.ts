import { DynamicModule, Global, Inject, Module } from '@nestjs/common';
import { AppConfig } from './config';
import { Clock, CLOCK, SYSTEM_CLOCK } from './clock';

export const APP_CONFIG = Symbol('APP_CONFIG');

/** Injects the validated configuration: `@InjectConfig() private readonly config: AppConfig`. */
export const InjectConfig = (): ParameterDecorator => Inject(APP_CONFIG);

@Global()
@Module({})
export class AppConfigModule {
  /** `clock`: the time schedules and deliveries go by (see `Clock`); the system's unless a test sets one. */
  static forRoot(config: AppConfig, clock: Clock = SYSTEM_CLOCK): DynamicModule {
    return {
      module: AppConfigModule,
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: CLOCK, useValue: clock },
      ],
      exports: [APP_CONFIG, CLOCK],
    };
  }
}
