import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadConfig } from '../config/config';
import { resolveDatabase, ResolvedDatabase } from '../database/embedded-postgres';
import { buildDataSourceOptions } from '../database/typeorm-options';
import { describeFailure, runCommand, UsageError, USAGE } from './commands';

/**
 * Operator CLI: same configuration and database as the server (embedded PostgreSQL included), pending
 * migrations applied like at server start. Prints JSON on stdout; on failure a message on stderr and exit 1
 * (2 for a wrong invocation).
 */
async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  let database: ResolvedDatabase | undefined;
  let dataSource: DataSource | undefined;
  try {
    const config = loadConfig();
    database = await resolveDatabase(config);
    dataSource = new DataSource({
      ...buildDataSourceOptions(config, database.url),
      migrationsRun: config.database.migrationsRun,
      extra: { max: 2, application_name: 'classroom-task-service-cli' },
    });
    await dataSource.initialize();
    const result = await runCommand(dataSource, argv);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`Error: ${describeFailure(error)}\n`);
    if (error instanceof UsageError) {
      process.stderr.write(`${USAGE}\n`);
      return 2;
    }
    return 1;
  } finally {
    if (dataSource?.isInitialized) await dataSource.destroy();
    await database?.stop();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`Error: ${describeFailure(error)}\n`);
    process.exit(1);
  },
);
