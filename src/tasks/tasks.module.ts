import { RunningJobs } from '../common/jobs/running-jobs';
import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { AiModule } from '../ai/ai.module';
import { ClassesRepositoryModule } from '../classes/classes.repository';
import { FilesModule } from '../files/files.module';
import { ClassTasksController } from './class-tasks.controller';
import { TaskAttachmentsService } from './task-attachments.service';
import { TaskDraftsService } from './task-drafts.service';
import { TaskReader } from './task-reader.service';
import { TasksController } from './tasks.controller';
import { TasksRepositoryModule } from './tasks.repository';
import { TasksService } from './tasks.service';

@Module({
  imports: [AccessModule, AiModule, FilesModule, ClassesRepositoryModule, TasksRepositoryModule],
  controllers: [ClassTasksController, TasksController],
  providers: [TasksService, TaskReader, TaskAttachmentsService, TaskDraftsService, RunningJobs],
  exports: [TaskAttachmentsService],
})
export class TasksModule {}
