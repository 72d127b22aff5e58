import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadConfig } from '../config/config';
import { loadEnvFile } from '../config/env-file';
import { buildDataSourceOptions, sessionUrl } from './typeorm-options';

/** TypeORM CLI entry (`npm run migration:*`): the app's options for migrations; needs DATABASE_URL. */
loadEnvFile();
const config = loadConfig();
if (!config.database.url) {
  throw new Error('DATABASE_URL must be set for the TypeORM CLI');
}
export default new DataSource(
  buildDataSourceOptions(config, sessionUrl(config, config.database.url), { forMigrations: true }),
);
