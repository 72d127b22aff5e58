import { DynamicModule, Global, Inject, Module } from '@nestjs/common';
import { AppConfig } from './config';

export const APP_CONFIG = Symbol('APP_CONFIG');

/** Injects the validated configuration: `@InjectConfig() private readonly config: AppConfig`. */
export const InjectConfig = (): ParameterDecorator => Inject(APP_CONFIG);

@Global()
@Module({})
export class AppConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppConfigModule,
      providers: [{ provide: APP_CONFIG, useValue: config }],
      exports: [APP_CONFIG],
    };
  }
}
