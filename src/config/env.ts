/** The variables loadConfig reads: `process.env` at start, a plain object in tests. */
export type Env = Record<string, string | undefined>;

/** A variable the service cannot start with; the entry points print its message as one line and exit 1. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`Invalid configuration: ${variable} ${reason}`);
  }
}

/** The longest delay Node's timers take; beyond it they fire after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** An empty value means the default, so `NAME=` in `.env` and an unset variable behave alike. */
export function str(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value === '' ? fallback : value;
}

export function optional(env: Env, name: string): string | null {
  const value = env[name];
  return value === undefined || value === '' ? null : value;
}

export function int(
  env: Env,
  name: string,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

export function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const normalized = raw.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(normalized)) return true;
  if (['false', '0', 'no', 'off'].includes(normalized)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

/** A URL of one of `protocols`, without trailing slashes (paths are appended to it). */
export function url(env: Env, name: string, fallback: string, protocols: string[]): string;
export function url(env: Env, name: string, fallback: null, protocols: string[]): string | null;
export function url(env: Env, name: string, fallback: string | null, protocols: string[]): string | null {
  const raw = optional(env, name) ?? fallback;
  if (raw === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be a URL, got "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw.replace(/\/+$/, '');
}
