import { Module } from '@nestjs/common';
import { SettingsRepository } from './settings.repository';
import { SettingsService } from './settings.service';

/** Operator settings (`settings` table): set by the CLI, read at request time by the modules they steer. */
@Module({ providers: [SettingsRepository, SettingsService], exports: [SettingsService] })
export class SettingsModule {}
