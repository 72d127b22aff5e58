import { Module } from '@nestjs/common';
import { UserChangesModule } from '../common/events/user-changes';
import { UsersController } from './users.controller';
import { UsersRepositoryModule } from './users.repository';
import { UsersService } from './users.service';
import { TransactionsModule } from '../database/transactions';
import { IdempotencyModule } from '../idempotency/idempotency.module';

@Module({
  imports: [IdempotencyModule, UserChangesModule, UsersRepositoryModule, TransactionsModule],
  controllers: [UsersController],
  providers: [UsersService],
  exports: [UsersService],
})
export class UsersModule {}
