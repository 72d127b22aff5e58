import { Module } from '@nestjs/common';
import { AccessService } from './access.service';
import { ClassRoleGuard } from './class-role.guard';
import { TaskAccessGuard } from './task-access.guard';

@Module({
  providers: [AccessService, ClassRoleGuard, TaskAccessGuard],
  exports: [AccessService, ClassRoleGuard, TaskAccessGuard],
})
export class AccessModule {}
