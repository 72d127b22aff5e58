import { Module } from '@nestjs/common';
import { SubmissionsExportService } from './submissions-export.service';
import { SubmissionsController } from './submissions.controller';
import { SubmissionsService } from './submissions.service';

@Module({
  controllers: [SubmissionsController],
  providers: [SubmissionsService, SubmissionsExportService],
})
export class SubmissionsModule {}
