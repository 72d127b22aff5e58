import { Module } from '@nestjs/common';
import { AccessService } from './access.service';
import { ClassRoleGuard } from './class-role.guard';

@Module({
  providers: [AccessService, ClassRoleGuard],
  exports: [AccessService, ClassRoleGuard],
})
export class AccessModule {}
