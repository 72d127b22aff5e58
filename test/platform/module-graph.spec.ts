import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { preProcessFile } from 'typescript';

const SRC = join(__dirname, '..', '..', 'src');

/** Source files of the service (specs excluded), relative to src/. */
function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [relative(SRC, path)] : [];
  });
}

/** The module folder of a file under src/; files at the top (main, bootstrap, app.module) compose them all. */
const folderOf = (file: string): string | undefined => {
  const parts = file.split(sep);
  return parts.length > 1 ? parts[0] : undefined;
};

/** Every import between two module folders, type-only and re-exports included, as `from -> to: file`. */
function folderImports(): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const file of sourceFiles()) {
    const from = folderOf(file);
    if (!from) continue;
    const text = readFileSync(join(SRC, file), 'utf8');
    for (const { fileName } of preProcessFile(text, true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const to = folderOf(relative(SRC, resolve(SRC, dirname(file), fileName)));
      if (!to || to === from) continue;
      if (!graph.has(from)) graph.set(from, new Map());
      const edges = graph.get(from)!;
      if (!edges.has(to)) edges.set(to, `${file} imports ${fileName}`);
    }
  }
  return graph;
}

/** One import path per cycle found, e.g. ['users/a.ts imports ../auth/b', 'auth/c.ts imports ../users/d']. */
function cycles(graph: Map<string, Map<string, string>>): string[][] {
  const found: string[][] = [];
  const done = new Set<string>();
  const visit = (folder: string, path: string[], evidence: string[]): void => {
    if (path.includes(folder)) {
      found.push(evidence.slice(path.indexOf(folder)));
      return;
    }
    if (done.has(folder)) return;
    for (const [to, why] of graph.get(folder) ?? []) visit(to, [...path, folder], [...evidence, why]);
    done.add(folder);
  };
  for (const folder of graph.keys()) visit(folder, [], []);
  return found;
}

describe('module structure', () => {
  const graph = folderImports();
  const dependsOn = (from: string, to: string): boolean => graph.get(from)?.has(to) ?? false;

  it('has no import cycle between the folders of src/', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('finds a cycle when there is one', () => {
    const looped = new Map([
      ['a', new Map([['b', 'a/x.ts imports ../b/y']])],
      ['b', new Map([['a', 'b/y.ts imports ../a/x']])],
    ]);
    expect(cycles(looped)).toEqual([['a/x.ts imports ../b/y', 'b/y.ts imports ../a/x']]);
  });

  it('keeps users below auth and mail below notifications, the two directions chosen', () => {
    expect(dependsOn('auth', 'users')).toBe(true);
    expect(dependsOn('users', 'auth')).toBe(false);
    expect(dependsOn('notifications', 'mail')).toBe(true);
    expect([...(graph.get('mail')?.keys() ?? [])]).toEqual(['config']);
  });

  it('has settings and schools in modules of their own, which users and auth use', () => {
    expect(dependsOn('auth', 'settings')).toBe(true);
    expect(dependsOn('users', 'schools')).toBe(true);
    expect(sourceFiles().filter((file) => /^users.*(setting|school)/.test(file))).toEqual([]);
  });

  it('declares no global module but the configuration', () => {
    const globals = sourceFiles().filter((file) => /@Global\(\)/.test(readFileSync(join(SRC, file), 'utf8')));
    expect(globals).toEqual([join('config', 'config.module.ts')]);
  });

  it('has one zoned-time module, in common', () => {
    expect(sourceFiles().filter((file) => file.includes('zoned-time'))).toEqual([
      join('common', 'utils', 'zoned-time.ts'),
    ]);
  });
});
