import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { FileStorageModule } from '../files/files.module';
import { ClassMembersService } from './class-members.service';
import { ClassesController } from './classes.controller';
import { ClassesRepositoryModule } from './classes.repository';
import { ClassesService } from './classes.service';
import { TransactionsModule } from '../database/transactions';
import { IdempotencyModule } from '../idempotency/idempotency.module';

/** Classes, membership, roles, ownership transfer and invite codes. */
@Module({
  imports: [IdempotencyModule, AccessModule, FileStorageModule, ClassesRepositoryModule, TransactionsModule],
  controllers: [ClassesController],
  providers: [ClassesService, ClassMembersService],
})
export class ClassesModule {}
