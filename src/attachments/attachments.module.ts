import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { SubmissionsModule } from '../submissions/submissions.module';
import { TasksModule } from '../tasks/tasks.module';
import { AttachmentsController } from './attachments.controller';
import { AttachmentsService } from './attachments.service';

/**
 * Routes keyed by an attachment id alone (`DELETE /files/attachments/:attachmentId`), for task and submission
 * attachments alike. Its own module: it uses both tasks and submissions, which `files` (imported by both)
 * cannot.
 */
@Module({
  imports: [AccessModule, TasksModule, SubmissionsModule],
  controllers: [AttachmentsController],
  providers: [AttachmentsService],
})
export class AttachmentsModule {}
