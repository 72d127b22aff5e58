import { Module } from '@nestjs/common';
import { AccessRepositoryModule } from './access.repository';
import { AccessService } from './access.service';
import { ClassRoleGuard } from './class-role.guard';

@Module({
  imports: [AccessRepositoryModule],
  providers: [AccessService, ClassRoleGuard],
  exports: [AccessService, ClassRoleGuard],
})
export class AccessModule {}
