import { Module } from '@nestjs/common';
import { SettingsService } from './settings.service';

/** Operator settings (`settings` table): set by the CLI, read at request time by the modules they steer. */
@Module({ providers: [SettingsService], exports: [SettingsService] })
export class SettingsModule {}
