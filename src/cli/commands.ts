import { DataSource } from 'typeorm';
import { normalizeEmail } from '../users/email';
import { SchoolsService } from '../users/schools.service';
import { SettingsService } from '../users/settings.service';
import { UsersRepository } from '../users/users.repository';
import { UsersService } from '../users/users.service';

export const USAGE = `Usage: npm run cli -- <command>

  schools:add <name>            add a school
  schools:list                  list schools
  settings:set <key> <value>    store a setting (value read as JSON when it parses, else as text)
  settings:get [key]            show one setting, or all
  users:deactivate <email>      deactivate an account (its login tokens stop working at once)
  users:activate <email>        activate an account again`;

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

/** An invocation checked for its arguments, to run against the database. */
export type Command = (dataSource: DataSource) => Promise<unknown>;

/**
 * Checks the command and its arguments without the database, so that a wrong invocation is told at once,
 * even when the database is unreachable or, embedded, would first have to start.
 */
export function parseCommand(argv: string[]): Command {
  const [command, ...rest] = argv;
  switch (command) {
    case 'schools:add': {
      const [name] = args(rest, 1, '<name>');
      return (dataSource) => new SchoolsService(new UsersRepository(dataSource)).add(name);
    }
    case 'schools:list':
      args(rest, 0, 'no arguments');
      return (dataSource) => new SchoolsService(new UsersRepository(dataSource)).list();
    case 'settings:set': {
      const [key, value] = args(rest, 2, '<key> <value>');
      return (dataSource) =>
        new SettingsService(new UsersRepository(dataSource)).set(key, parseSettingValue(value));
    }
    case 'settings:get': {
      if (rest.length > 1) throw new UsageError('Expected at most one <key>');
      const [key] = rest;
      return (dataSource) => {
        const settings = new SettingsService(new UsersRepository(dataSource));
        return key === undefined ? settings.list() : settings.get(key);
      };
    }
    case 'users:deactivate':
    case 'users:activate': {
      const email = normalizeEmail(args(rest, 1, '<email>')[0]);
      const active = command === 'users:activate';
      return (dataSource) =>
        new UsersService(dataSource, new UsersRepository(dataSource)).setActive(email, active);
    }
    default:
      throw new UsageError(command ? `Unknown command "${command}"` : 'No command given');
  }
}

/** Runs one operator command and returns what it prints as JSON. */
export async function runCommand(dataSource: DataSource, argv: string[]): Promise<unknown> {
  return parseCommand(argv)(dataSource);
}

/** The message an operator sees for a failed command. */
export function describeFailure(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
