import { ConfigError, Env } from '../../src/config/config';

/**
 * `read` (one area's loader, or loadConfig) refuses each `[variable, env]` of `cases` with a ConfigError of
 * one line that names that variable, as the entry points print it.
 */
export function itRejects(read: (env: Env) => unknown, cases: [variable: string, env: Env][]): void {
  it.each(cases)('rejects a bad %s with one message naming it', (variable, env) => {
    let thrown: unknown;
    try {
      read(env);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    const error = thrown as ConfigError;
    expect(error.variable).toBe(variable);
    expect(error.message).toMatch(new RegExp(`^Invalid configuration: ${variable} `));
    expect(error.message).not.toContain('\n');
  });
}
