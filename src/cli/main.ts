import 'reflect-metadata';
import type { INestApplicationContext, LoggerService } from '@nestjs/common';
import { loadConfig } from '../config/config';
import { prepareDataDir } from '../config/data-dir';
import { loadEnvFile } from '../config/env-file';
import { resolveDatabase, ResolvedDatabase } from '../database/embedded';
import { runMigrationsLocked } from '../database/migrate';
import { sessionUrl } from '../database/typeorm-options';
import { describeFailure, parseCommand, UsageError, USAGE } from './commands';

/** Progress of the database start and migrations goes to stderr: stdout carries only the JSON result. */
const toStderr = (message: unknown): void => void process.stderr.write(`${String(message)}\n`);
const stderrLogger: LoggerService = { log: toStderr, warn: toStderr, error: toStderr };

/**
 * Operator CLI: same configuration and database as the server (embedded PostgreSQL included, shared with a
 * running server), pending migrations applied like at server start. Prints JSON on stdout; on failure a message on stderr and exit 1
 * (2 for a wrong invocation).
 */
async function main(argv: string[]): Promise<number> {
  if (argv[0] === '--help' || argv[0] === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let database: ResolvedDatabase | undefined;
  let context: INestApplicationContext | undefined;
  try {
    const command = parseCommand(argv);
    loadEnvFile();
    const config = prepareDataDir(loadConfig());
    let result: unknown;
    if ('offline' in command) {
      result = await command.offline(config);
    } else {
      database = await resolveDatabase(config, { logger: stderrLogger });
      // A one-off command: its few connections go direct, past any pooler, migrations and their lock included.
      const url = sessionUrl(config, database.url);
      if (config.database.migrationsRun) await runMigrationsLocked(config, url, stderrLogger);
      // Nest and the modules load only for a valid invocation: a wrong one is told without that start-up cost.
      const { createCliContext } = await import('./cli.module.js');
      context = await createCliContext(config, url);
      result = await command(context);
    }
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
    await context?.close();
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
