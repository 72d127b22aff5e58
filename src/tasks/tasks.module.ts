import { RunningJobs } from '../common/jobs/running-jobs';
import { MetricsModule } from '../common/metrics/metrics.module';
import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { AiModule } from '../ai/ai.module';
import { ClassesRepositoryModule } from '../classes/classes.repository';
import { FilesModule } from '../files/files.module';
import { NotificationsModule } from '../notifications/notifications.module';
import { SubmissionsModule } from '../submissions/submissions.module';
import { ClassTasksController } from './class-tasks.controller';
import { TaskAttachmentsService } from './task-attachments.service';
import { TaskExtensionsController } from './task-extensions.controller';
import { TaskExtensionsRepository } from './task-extensions.repository';
import { TaskExtensionsService } from './task-extensions.service';
import { TaskRubricsController } from './task-rubrics.controller';
import { TaskRubricsRepository } from './task-rubrics.repository';
import { TaskRubricsService } from './task-rubrics.service';
import { TaskDraftsService } from './task-drafts.service';
import { TaskReader } from './task-reader.service';
import { TasksController } from './tasks.controller';
import { TasksRepositoryModule } from './tasks.repository';
import { TasksService } from './tasks.service';
import { TransactionsModule } from '../database/transactions';
import { IdempotencyModule } from '../idempotency/idempotency.module';

@Module({
  // SubmissionsModule: a task switched to IMMEDIATE grade release releases its grades (GradeReleases).
  imports: [
    IdempotencyModule,
    MetricsModule,
    TransactionsModule,
    AccessModule,
    AiModule,
    FilesModule,
    NotificationsModule,
    ClassesRepositoryModule,
    TasksRepositoryModule,
    SubmissionsModule,
  ],
  controllers: [ClassTasksController, TasksController, TaskExtensionsController, TaskRubricsController],
  providers: [
    TasksService,
    TaskReader,
    TaskAttachmentsService,
    TaskDraftsService,
    TaskExtensionsService,
    TaskExtensionsRepository,
    TaskRubricsService,
    TaskRubricsRepository,
    RunningJobs,
  ],
  exports: [TaskAttachmentsService],
})
export class TasksModule {}
