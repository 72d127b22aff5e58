import { Module } from '@nestjs/common';
import { ClassMembersService } from './class-members.service';
import { ClassesController } from './classes.controller';
import { ClassesService } from './classes.service';

/** Classes, membership, roles, ownership transfer and invite codes (SPEC "Class endpoints"). */
@Module({
  controllers: [ClassesController],
  providers: [ClassesService, ClassMembersService],
})
export class ClassesModule {}
