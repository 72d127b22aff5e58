import { Module } from '@nestjs/common';
import { UserChangesModule } from '../common/events/user-changes';
import { SchoolsController } from './schools.controller';
import { SchoolsService } from './schools.service';
import { SettingsService } from './settings.service';
import { UsersController } from './users.controller';
import { UsersService } from './users.service';

@Module({
  imports: [UserChangesModule],
  controllers: [UsersController, SchoolsController],
  providers: [UsersService, SchoolsService, SettingsService],
  exports: [UsersService, SettingsService],
})
export class UsersModule {}
