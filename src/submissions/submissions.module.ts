import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { FilesModule } from '../files/files.module';
import { NotificationsModule } from '../notifications/notifications.module';
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
  imports: [IdempotencyModule, AccessModule, FilesModule, NotificationsModule, TransactionsModule],
  controllers: [SubmissionsController, SubmissionByIdController, GradesController],
  providers: [SubmissionsService, SubmissionsExportService, SubmissionsRepository, GradeReleases],
  exports: [SubmissionsService, GradeReleases],
})
export class SubmissionsModule {}
