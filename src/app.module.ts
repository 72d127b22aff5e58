import { DynamicModule, Module, Type } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccessModule } from './access/access.module';
import { AiModule } from './ai/ai.module';
import { AttachmentsModule } from './attachments/attachments.module';
import { AuthModule } from './auth/auth.module';
import { CalendarModule } from './calendar/calendar.module';
import { JwtAuthGuard } from './auth/jwt-auth.guard';
import { ClassesModule } from './classes/classes.module';
import { CommentsModule } from './comments/comments.module';
import { AllExceptionsFilter } from './common/errors/all-exceptions.filter';
import { DatabaseOutageModule } from './common/errors/database-outage';
import { Metrics } from './common/metrics/metrics';
import { MetricsModule } from './common/metrics/metrics.module';
import { AppConfig } from './config/config';
import { Clock, SYSTEM_CLOCK } from './config/clock';
import { AppConfigModule } from './config/config.module';
import { buildDataSourceOptions, MigrationClass } from './database/typeorm-options';
import { FilesModule } from './files/files.module';
import { HealthModule } from './health/health.module';
import { IdempotencyModule } from './idempotency/idempotency.module';
import { MailModule } from './mail/mail.module';
import { NotificationsModule } from './notifications/notifications.module';
import { SchoolsModule } from './schools/schools.module';
import { SubmissionsModule } from './submissions/submissions.module';
import { TasksModule } from './tasks/tasks.module';
import { UsersModule } from './users/users.module';

/**
 * A module mounted beside those below without editing this file, with the migrations of its tables (run at
 * start with those of `migrations/`): the test tree's example, `test/extension/announcements/`. A module of
 * `src/` is listed below instead, its migrations in `migrations/` (docs/architecture.md, "Adding a module").
 */
export interface AppExtension {
  module: Type;
  migrations: readonly MigrationClass[];
}

@Module({})
export class AppModule {
  /** `databaseUrl` is the configured URL, or the embedded server's when none is configured. */
  static forRoot(
    config: AppConfig,
    databaseUrl: string,
    extensions: readonly AppExtension[] = [],
    clock: Clock = SYSTEM_CLOCK,
  ): DynamicModule {
    return {
      module: AppModule,
      imports: [
        AppConfigModule.forRoot(config, clock),
        MetricsModule,
        // Migrations ran before, under their lock and on a session connection (`runMigrationsLocked`). The
        // pool reports to the metrics.
        TypeOrmModule.forRootAsync({
          imports: [MetricsModule],
          inject: [Metrics],
          useFactory: (metrics: Metrics) =>
            buildDataSourceOptions(config, databaseUrl, { observer: metrics.poolObserver('app') }),
        }),
        // For the exception filter, which answers 503 while the database is out.
        DatabaseOutageModule,
        ScheduleModule.forRoot(),
        AccessModule,
        FilesModule,
        MailModule,
        HealthModule,
        AuthModule,
        UsersModule,
        SchoolsModule,
        ClassesModule,
        TasksModule,
        AiModule,
        SubmissionsModule,
        AttachmentsModule,
        NotificationsModule,
        CalendarModule,
        CommentsModule,
        IdempotencyModule,
        ...extensions.map((extension) => extension.module),
      ],
      providers: [
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
        // Global guards run before a route's own: access guards see the authenticated user.
        { provide: APP_GUARD, useClass: JwtAuthGuard },
      ],
    };
  }
}
