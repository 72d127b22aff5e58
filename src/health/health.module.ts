import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { FileStorageModule } from '../files/files.module';
import { HealthController } from './health.controller';

@Module({
  imports: [TerminusModule.forRoot({ logger: false }), FileStorageModule],
  controllers: [HealthController],
})
export class HealthModule {}
