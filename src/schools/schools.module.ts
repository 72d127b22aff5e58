import { Module } from '@nestjs/common';
import { SchoolsController } from './schools.controller';
import { SchoolsRepository } from './schools.repository';
import { SchoolsService } from './schools.service';

/** The schools users pick in their profile: listed by GET /schools, added by the operator CLI. */
@Module({
  controllers: [SchoolsController],
  providers: [SchoolsRepository, SchoolsService],
  exports: [SchoolsService],
})
export class SchoolsModule {}
