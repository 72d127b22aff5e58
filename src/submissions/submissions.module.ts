import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { FilesModule } from '../files/files.module';
import { SubmissionsExportService } from './submissions-export.service';
import { SubmissionByIdController, SubmissionsController } from './submissions.controller';
import { SubmissionsRepository } from './submissions.repository';
import { SubmissionsService } from './submissions.service';

@Module({
  imports: [AccessModule, FilesModule],
  controllers: [SubmissionsController, SubmissionByIdController],
  providers: [SubmissionsService, SubmissionsExportService, SubmissionsRepository],
  exports: [SubmissionsService],
})
export class SubmissionsModule {}
