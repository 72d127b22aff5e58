import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './config';
import { prepareDataDir } from './data-dir';

describe('prepareDataDir', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'cts-data-dir-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const prepare = (env: Record<string, string> = {}) =>
    prepareDataDir(loadConfig({ DATA_DIR: root, ...env }));

  it('creates a missing DATA_DIR', () => {
    const dataDir = join(root, 'a', 'b');
    expect(prepareDataDir(loadConfig({ DATA_DIR: dataDir })).dataDir).toBe(dataDir);
    expect(statSync(dataDir).isDirectory()).toBe(true);
  });

  it('generates a development JWT secret once into DATA_DIR and reuses it', () => {
    const first = prepare().jwt.secret;
    expect(first.length).toBeGreaterThanOrEqual(32);
    expect(readFileSync(join(root, 'jwt-secret'), 'utf8')).toBe(first);
    expect(statSync(join(root, 'jwt-secret')).mode & 0o777).toBe(0o600);
    expect(prepare().jwt.secret).toBe(first);
  });

  it('never writes an explicit JWT_SECRET to disk', () => {
    expect(prepare({ JWT_SECRET: 'x'.repeat(32) }).jwt.secret).toBe('x'.repeat(32));
    expect(existsSync(join(root, 'jwt-secret'))).toBe(false);
  });

  it('refuses a development JWT secret file holding fewer than 32 characters, naming JWT_SECRET', () => {
    writeFileSync(join(root, 'jwt-secret'), 'secret\n');
    expect(() => prepare()).toThrow(/^Invalid configuration: JWT_SECRET .*jwt-secret/);
    writeFileSync(join(root, 'jwt-secret'), '');
    expect(() => prepare()).toThrow(ConfigError);
  });

  it('refuses a DATA_DIR that cannot hold files, naming it', () => {
    const file = join(root, 'not-a-directory');
    writeFileSync(file, '');
    for (const path of [file, join(file, 'data')]) {
      const config = loadConfig({ DATA_DIR: path, JWT_SECRET: 'x'.repeat(32) });
      expect(() => prepareDataDir(config)).toThrow(
        /^Invalid configuration: DATA_DIR must be a writable directory, got "\S+" \(.+\)$/,
      );
    }
  });
});
