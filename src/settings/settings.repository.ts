import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { one, rows } from '../database/sql';

export interface SettingRow {
  key: string;
  value: unknown;
}

/** Operator settings, one JSON value per key. */
@Injectable()
export class SettingsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async find(key: string): Promise<SettingRow | null> {
    const row = await one<{ value: unknown }>(this.dataSource, `SELECT value FROM settings WHERE key = $1`, [
      key,
    ]);
    return row && { key, value: row.value };
  }

  list(): Promise<SettingRow[]> {
    return rows<SettingRow>(this.dataSource, `SELECT key, value FROM settings ORDER BY key`);
  }

  async save(key: string, value: unknown): Promise<void> {
    await rows(
      this.dataSource,
      `INSERT INTO settings (key, value, updated_at) VALUES ($1, $2::jsonb, now())
       ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
      [key, JSON.stringify(value)],
    );
  }
}
