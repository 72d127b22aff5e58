import { join } from 'node:path';
import { DataSourceOptions } from 'typeorm';
import { AppConfig } from '../config/config';
import { SnakeNamingStrategy } from './snake-naming.strategy';

/** Compiled code loads dist/migrations/*.js; ts-node and ts-jest load migrations/*.ts from the repository. */
const runningFromSource = __filename.endsWith('.ts');
export const MIGRATIONS_GLOB = runningFromSource
  ? join(__dirname, '..', '..', 'migrations', '*.ts')
  : join(__dirname, '..', 'migrations', '*.js');

/** One definition of the connection, shared by the app, the TypeORM CLI and the operator CLI. */
export function buildDataSourceOptions(config: AppConfig, databaseUrl: string): DataSourceOptions {
  return {
    type: 'postgres',
    url: databaseUrl,
    entities: [join(__dirname, '..', '**', '*.entity.{ts,js}')],
    migrations: [MIGRATIONS_GLOB],
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    namingStrategy: new SnakeNamingStrategy(),
    extra: { max: config.database.poolSize, application_name: 'classroom-task-service' },
  };
}
