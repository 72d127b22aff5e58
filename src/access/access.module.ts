import { Module } from '@nestjs/common';
import { AccessRepositoryModule } from './access.repository';
import { AccessService } from './access.service';
import { ClassRoleGuard } from './class-role.guard';
import { TaskAccessGuard } from './task-access.guard';
import { TaskItemAccessGuard } from './task-item-access.guard';

@Module({
  imports: [AccessRepositoryModule],
  providers: [AccessService, ClassRoleGuard, TaskAccessGuard, TaskItemAccessGuard],
  exports: [AccessService, ClassRoleGuard, TaskAccessGuard, TaskItemAccessGuard],
})
export class AccessModule {}
