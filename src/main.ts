// First: tracing, when on, must hook the modules below before they load.
import { stopTracing } from './tracing';
import { Logger, LoggerService } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import { createApp, createLogger } from './bootstrap';
import { AppConfig, ConfigError, loadConfig } from './config/config';
import { prepareDataDir } from './config/data-dir';
import { loadEnvFile } from './config/env-file';
import { ResolvedDatabase, resolveDatabase } from './database/embedded';

const SHUTDOWN_SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

function readConfig(): AppConfig {
  try {
    loadEnvFile();
    return prepareDataDir(loadConfig());
  } catch (error) {
    // One line naming the variable, before any logger exists.
    console.error(error instanceof ConfigError ? error.message : String(error));
    process.exit(1);
  }
}

async function main(): Promise<void> {
  const config = readConfig();
  const logger = createLogger(config);
  Logger.overrideLogger(logger);
  const log = new Logger('Main');
  process.on('uncaughtException', (error) => fail(logger, error, 'Uncaught exception'));
  process.on('unhandledRejection', (error) => fail(logger, error, 'Unhandled promise rejection'));

  const database = await resolveDatabase(config, { logger, exclusive: true }).catch((error: unknown) =>
    fail(logger, error, 'Database'),
  );
  let app: NestExpressApplication | undefined;
  try {
    app = await createApp(config, database.url);
    await app.listen(config.port);
  } catch (error) {
    // A failed listen (port taken) comes after the jobs and connections started: close them before the
    // database stops under them.
    await app?.close().catch(() => undefined);
    await database.stop();
    return fail(logger, error, 'Start failed');
  }
  stopOnSignals(app, database, log);
  log.log(`Listening on :${config.port}${database.embedded ? ' (embedded PostgreSQL)' : ''}`);
}

/**
 * SIGTERM/SIGINT: stop accepting connections and let in-flight requests finish (app.close runs every
 * module's shutdown hooks), stop the embedded database, exit 0. A second signal exits at once.
 */
function stopOnSignals(app: NestExpressApplication, database: ResolvedDatabase, log: Logger): void {
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) {
      log.warn(`${signal} again: exiting without waiting`);
      process.exit(1);
    }
    stopping = true;
    log.log(`${signal} received: finishing in-flight requests`);
    try {
      await app.close();
      await database.stop();
      await stopTracing();
    } catch (error) {
      log.error({ err: error }, 'Shutdown failed');
      process.exit(1);
    }
    log.log('Stopped');
    process.exit(0);
  };
  for (const signal of SHUTDOWN_SIGNALS) process.on(signal, (received) => void stop(received));
}

function fail(logger: LoggerService, error: unknown, message: string): never {
  logger.fatal?.({ err: error }, message, 'Main');
  // The embedded server, if any, gets a fast shutdown request from its process 'exit' hook.
  process.exit(1);
}

void main();
