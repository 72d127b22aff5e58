import { Global, Module } from '@nestjs/common';
import { AccessService } from './access.service';
import { ClassRoleGuard } from './class-role.guard';

@Global()
@Module({
  providers: [AccessService, ClassRoleGuard],
  exports: [AccessService, ClassRoleGuard],
})
export class AccessModule {}
