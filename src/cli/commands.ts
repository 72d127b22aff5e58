import { join } from 'node:path';
import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { normalizeEmail } from '../common/validation/email';
import { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { removeEmbeddedCluster } from '../database/embedded';
import { migrateLocalFiles } from '../files/file-migration';
import { SchoolsService } from '../schools/schools.service';
import { SettingsService } from '../settings/settings.service';
import { UsersService } from '../users/users.service';

export const USAGE = `Usage: npm run cli -- <command>

  schools:add <name>            add a school
  schools:list                  list schools
  settings:set <key> <value>    store a setting (value read as JSON when it parses, else as text)
  settings:get [key]            show one setting, or all
  users:deactivate <email>      deactivate an account (its login tokens stop working at once)
  users:activate <email>        activate an account again
  database:migrate              apply the pending migrations (under their lock, as every command does) and
                                show the latest applied: the step before a new version serves
  files:migrate                 copy the files of DATA_DIR/files into the S3 bucket (FILE_STORAGE=s3);
                                skips those already there, so a stopped run resumes when started again
  database:remove-embedded --yes
                                delete the embedded database of DATA_DIR (DATABASE_URL unset), including the
                                cluster a start as root keeps under /var/lib; refused while it runs`;

/** A wrong invocation: the CLI prints the usage with it. */
export class UsageError extends Error {}

/** `true`, `42`, `"text"` or `{"a":1}` are JSON; anything else is taken as the text itself. */
export function parseSettingValue(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function args(rest: string[], count: number, names: string): string[] {
  if (rest.length !== count) throw new UsageError(`Expected ${names}`);
  return rest;
}

/** An invocation checked for its arguments, to run with the services of the CLI's application context. */
export type Command = (context: INestApplicationContext) => Promise<unknown>;
/** An invocation on the files of DATA_DIR alone: run without starting the database. */
export interface OfflineCommand {
  offline(config: AppConfig): Promise<unknown>;
}

/**
 * Checks the command and its arguments without the database, so that a wrong invocation is told at once,
 * even when the database is unreachable or, embedded, would first have to start.
 */
export function parseCommand(argv: string[]): Command | OfflineCommand {
  const [command, ...rest] = argv;
  switch (command) {
    case 'schools:add': {
      const [name] = args(rest, 1, '<name>');
      return (context) => context.get(SchoolsService).add(name);
    }
    case 'schools:list':
      args(rest, 0, 'no arguments');
      return (context) => context.get(SchoolsService).list();
    case 'settings:set': {
      const [key, value] = args(rest, 2, '<key> <value>');
      return (context) => context.get(SettingsService).set(key, parseSettingValue(value));
    }
    case 'settings:get': {
      if (rest.length > 1) throw new UsageError('Expected at most one <key>');
      const [key] = rest;
      return (context) => {
        const settings = context.get(SettingsService);
        return key === undefined ? settings.list() : settings.get(key);
      };
    }
    case 'users:deactivate':
    case 'users:activate': {
      const email = normalizeEmail(args(rest, 1, '<email>')[0]);
      const active = command === 'users:activate';
      return (context) => context.get(UsersService).setActive(email, active);
    }
    case 'files:migrate':
      args(rest, 0, 'no arguments');
      return (context) =>
        migrateLocalFiles(context.get<AppConfig>(APP_CONFIG), (line) => process.stderr.write(`${line}\n`));
    case 'database:migrate':
      args(rest, 0, 'no arguments');
      return latestMigration;
    case 'database:remove-embedded':
      // It deletes every record: the flag says the operator meant it.
      if (args(rest, 1, '--yes')[0] !== '--yes') throw new UsageError('Expected --yes');
      return { offline: removeEmbeddedDatabase };
    default:
      throw new UsageError(command ? `Unknown command "${command}"` : 'No command given');
  }
}

/** The migrations ran as the CLI started (`main.ts`); this names the latest applied. */
async function latestMigration(context: INestApplicationContext): Promise<{ latest: string | null }> {
  const [latest] = await context
    .get(DataSource)
    .query<{ name: string }[]>('SELECT name FROM migrations ORDER BY timestamp DESC LIMIT 1');
  return { latest: latest?.name ?? null };
}

async function removeEmbeddedDatabase(config: AppConfig): Promise<{ removed: string[] }> {
  if (config.database.url) throw new Error('DATABASE_URL is set: there is no embedded database to remove');
  return { removed: await removeEmbeddedCluster(join(config.dataDir, 'postgres')) };
}

/** Runs one operator command and returns what it prints as JSON. */
export async function runCommand(context: INestApplicationContext, argv: string[]): Promise<unknown> {
  const command = parseCommand(argv);
  return 'offline' in command ? command.offline(context.get<AppConfig>(APP_CONFIG)) : command(context);
}

/** The message an operator sees for a failed command. */
export function describeFailure(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
