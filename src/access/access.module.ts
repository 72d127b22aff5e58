import { Module } from '@nestjs/common';
import { AccessRepositoryModule } from './access.repository';
import { AccessService } from './access.service';
import { ClassRoleGuard } from './class-role.guard';
import { TaskAccessGuard } from './task-access.guard';
import { TaskItemAccessGuard } from './task-item-access.guard';
import { TransactionsModule } from '../database/transactions';

@Module({
  imports: [AccessRepositoryModule, TransactionsModule],
  providers: [AccessService, ClassRoleGuard, TaskAccessGuard, TaskItemAccessGuard],
  exports: [AccessService, ClassRoleGuard, TaskAccessGuard, TaskItemAccessGuard],
})
export class AccessModule {}
