import { Injectable } from '@nestjs/common';
import { AppError } from '../common/errors/app-error';
import { SettingsRepository } from './settings.repository';

export const REGISTRATION_OPEN = 'auth.registration_open';

interface SettingDefinition {
  defaultValue: unknown;
  /** null when the value is acceptable, else why not. */
  check(value: unknown): string | null;
}

/** Settings the service reads, with their defaults; other keys may be stored but mean nothing to it. */
const KNOWN_SETTINGS: Record<string, SettingDefinition> = {
  [REGISTRATION_OPEN]: {
    defaultValue: true,
    check: (value) => (typeof value === 'boolean' ? null : 'must be true or false'),
  },
};

const SETTING_KEY = /^[A-Za-z0-9_.-]{1,100}$/;

export interface SettingValue {
  key: string;
  value: unknown;
}

/** Operator settings, stored in the database and read at request time so a change applies at once everywhere. */
@Injectable()
export class SettingsService {
  constructor(private readonly settings: SettingsRepository) {}

  async get(key: string): Promise<SettingValue> {
    const stored = await this.settings.find(key);
    if (stored) return stored;
    const known = KNOWN_SETTINGS[key];
    if (!known) throw AppError.notFound(`Setting "${key}"`);
    return { key, value: known.defaultValue };
  }

  /** Stored settings plus the defaults of known settings that were never set, sorted by key. */
  async list(): Promise<SettingValue[]> {
    const rows: SettingValue[] = await this.settings.list();
    const stored = new Set(rows.map((row) => row.key));
    const defaults = Object.entries(KNOWN_SETTINGS)
      .filter(([key]) => !stored.has(key))
      .map(([key, definition]) => ({ key, value: definition.defaultValue }));
    return [...rows, ...defaults].sort((a, b) => a.key.localeCompare(b.key));
  }

  async set(key: string, value: unknown): Promise<SettingValue> {
    if (!SETTING_KEY.test(key)) throw AppError.validation('A setting key is 1 to 100 of A-Z a-z 0-9 _ . -');
    const problem = KNOWN_SETTINGS[key]?.check(value) ?? null;
    if (problem) throw AppError.validation(`${key} ${problem}`);
    await this.settings.save(key, value);
    return { key, value };
  }

  async isRegistrationOpen(): Promise<boolean> {
    return (await this.get(REGISTRATION_OPEN)).value === true;
  }
}
