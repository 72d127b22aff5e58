import { DataSource } from 'typeorm';
import { normalizeEmail } from '../users/email';
import { SchoolsService } from '../users/schools.service';
import { SettingsService } from '../users/settings.service';
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

/** Runs one operator command and returns what it prints as JSON. */
export async function runCommand(dataSource: DataSource, argv: string[]): Promise<unknown> {
  const [command, ...rest] = argv;
  const schools = new SchoolsService(dataSource);
  const settings = new SettingsService(dataSource);
  const users = new UsersService(dataSource);
  switch (command) {
    case 'schools:add':
      return schools.add(args(rest, 1, '<name>')[0]);
    case 'schools:list':
      args(rest, 0, 'no arguments');
      return schools.list();
    case 'settings:set': {
      const [key, value] = args(rest, 2, '<key> <value>');
      return settings.set(key, parseSettingValue(value));
    }
    case 'settings:get':
      if (rest.length > 1) throw new UsageError('Expected at most one <key>');
      return rest.length === 1 ? settings.get(rest[0]) : settings.list();
    case 'users:deactivate':
    case 'users:activate':
      return users.setActive(normalizeEmail(args(rest, 1, '<email>')[0]), command === 'users:activate');
    default:
      throw new UsageError(command ? `Unknown command "${command}"` : 'No command given');
  }
}

/** The message an operator sees for a failed command. */
export function describeFailure(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
