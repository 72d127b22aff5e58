import { Module } from '@nestjs/common';
import { MetricsModule } from '../common/metrics/metrics.module';
import { AccessModule } from '../access/access.module';
import { FilesModule } from '../files/files.module';
import { NotificationsModule } from '../notifications/notifications.module';
import { CsvStreams } from './csv-streams';
import { GradebookController } from './gradebook.controller';
import { GradebookRepository } from './gradebook.repository';
import { GradebookService } from './gradebook.service';
import { GradeReleases } from './grade-releases.service';
import { GradesController } from './grades.controller';
import { SubmissionsExportService } from './submissions-export.service';
import { SubmissionByIdController, SubmissionsController } from './submissions.controller';
import { SubmissionsRepository } from './submissions.repository';
import { SubmissionsService } from './submissions.service';
import { TransactionsModule } from '../database/transactions';
import { IdempotencyModule } from '../idempotency/idempotency.module';

/**
 * Exports the submissions service (attachments) and the grade releases (tasks: a task switched to IMMEDIATE
 * releases its grades).
 */
@Module({
  imports: [
    IdempotencyModule,
    AccessModule,
    FilesModule,
    MetricsModule,
    NotificationsModule,
    TransactionsModule,
  ],
  controllers: [SubmissionsController, SubmissionByIdController, GradesController, GradebookController],
  providers: [
    SubmissionsService,
    SubmissionsExportService,
    SubmissionsRepository,
    GradeReleases,
    CsvStreams,
    GradebookService,
    GradebookRepository,
  ],
  exports: [SubmissionsService, GradeReleases],
})
export class SubmissionsModule {}
