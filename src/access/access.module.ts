import { Module } from '@nestjs/common';
import { AccessRepositoryModule } from './access.repository';
import { AccessService } from './access.service';
import { ClassRoleGuard } from './class-role.guard';
import { TaskAccessGuard } from './task-access.guard';

@Module({
  imports: [AccessRepositoryModule],
  providers: [AccessService, ClassRoleGuard, TaskAccessGuard],
  exports: [AccessService, ClassRoleGuard, TaskAccessGuard],
})
export class AccessModule {}
