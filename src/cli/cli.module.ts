import { DynamicModule, INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/config';
import { AppConfigModule } from '../config/config.module';
import { RepositoriesModule } from '../database/repositories.module';
import { buildDataSourceOptions } from '../database/typeorm-options';
import { SchoolsModule } from '../schools/schools.module';
import { SettingsModule } from '../settings/settings.module';
import { UsersModule } from '../users/users.module';

/** How the CLI's connections show in `pg_stat_activity`. */
export const CLI_APPLICATION_NAME = 'classroom-task-service-cli';

/**
 * Only what the operator commands use: no HTTP server, no scheduled jobs, no delivery worker, no token-user
 * cache listener. Migrations are the caller's (`runMigrationsLocked`, as at server start).
 */
@Module({})
export class CliModule {
  static forRoot(config: AppConfig, databaseUrl: string): DynamicModule {
    return {
      module: CliModule,
      imports: [
        AppConfigModule.forRoot(config),
        TypeOrmModule.forRoot({
          ...buildDataSourceOptions(config, databaseUrl),
          extra: { max: 2, application_name: CLI_APPLICATION_NAME },
          // One command, one attempt: the operator sees the failure at once rather than after retries.
          retryAttempts: 0,
        }),
        RepositoriesModule,
        SchoolsModule,
        SettingsModule,
        UsersModule,
      ],
    };
  }
}

/**
 * The CLI's Nest application context. Nest logs nothing: stdout carries only the JSON result, and a failure
 * reaches the caller as the rejection, which the CLI prints once.
 */
export function createCliContext(config: AppConfig, databaseUrl: string): Promise<INestApplicationContext> {
  return NestFactory.createApplicationContext(CliModule.forRoot(config, databaseUrl), {
    logger: false,
    abortOnError: false,
  });
}
