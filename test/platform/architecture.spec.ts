import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/**
 * The module rules of docs/architecture.md, read from the import statements of src/. A module is a folder
 * directly under src/; the files directly in src/ are the composition root, which may import any module.
 * The example extension is held to the same rules: each folder of test/extension/ is a module named after
 * it (its migrations/ folder aside, which stands for the repository's migrations/). The rules have no
 * exception lists: a new cycle, import or global module fails here.
 */

const SRC = resolve(__dirname, '..', '..', 'src');
const EXTENSIONS = resolve(__dirname, '..', 'extension');
const ROOT = '(root)';
/** Where a file of neither src/ nor an extension belongs (e.g. test/utils/): no module may import it. */
const OUTSIDE = '(outside the modules)';
/** The path of an extension's file, relative to src/: `../test/extension/<module>/…`. */
const EXTENSION_PATH = /^\.\.\/test\/extension\/([\w-]+)\//;

/** The folders of `dir`, sorted. */
const foldersOf = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();

/** The modules of the test tree mounted as extensions (`createTestApp(env, { extensions })`). */
const EXTENSION_MODULES = foldersOf(EXTENSIONS);

/** Every module may import these; they import no feature module themselves. */
const FOUNDATION = ['common', 'config', 'database'];

/**
 * The modules each module imports besides FOUNDATION, exactly (an unused entry fails too, so this table and
 * the one in docs/architecture.md say what the code does). Together they form no cycle (checked below); a
 * new dependency is a design decision: add it here and to docs/architecture.md.
 */
const ALLOWED_IMPORTS: Record<string, string[]> = {
  config: [],
  common: ['config'],
  database: ['config'],
  access: [],
  ai: ['idempotency'],
  attachments: ['access', 'submissions', 'tasks'],
  auth: ['idempotency', 'mail', 'notifications', 'settings', 'users'],
  calendar: ['access', 'idempotency'],
  classes: ['access', 'files', 'idempotency'],
  cli: ['files', 'schools', 'settings', 'users'],
  comments: ['access', 'idempotency', 'notifications'],
  files: ['access'],
  health: ['files'],
  idempotency: [],
  mail: [],
  notifications: ['access', 'idempotency', 'mail'],
  schools: [],
  settings: [],
  submissions: ['access', 'classes', 'files', 'idempotency', 'notifications'],
  tasks: ['access', 'ai', 'classes', 'files', 'idempotency', 'notifications', 'submissions'],
  users: ['classes', 'idempotency', 'schools'],
  // The example extension, test/extension/announcements/ (docs/architecture.md, "Example extension").
  announcements: ['access', 'idempotency', 'notifications'],
};

/**
 * The one module that owns each table the migrations create: only its files write the table (an INSERT,
 * UPDATE or DELETE in their SQL, or an entity TypeORM writes through). Other modules may read it in their
 * own statements (one join beats a call per row); a write elsewhere goes through the owner's code. A new
 * table gets its owner here and in docs/architecture.md.
 */
const TABLE_OWNERS: Record<string, string> = {
  auth_tokens: 'auth',
  email_sends: 'auth',
  calendar_feeds: 'calendar',
  classes: 'classes',
  class_members: 'classes',
  task_comments: 'comments',
  throttler_hits: 'common',
  storage_reservations: 'files',
  idempotency_keys: 'idempotency',
  notifications: 'notifications',
  notification_deliveries: 'notifications',
  notification_prefs: 'notifications',
  notification_schedules: 'notifications',
  notification_digest_days: 'notifications',
  notification_streams: 'notifications',
  notification_stream_tickets: 'notifications',
  notification_task_publications: 'notifications',
  notification_task_reminders: 'notifications',
  schools: 'schools',
  settings: 'settings',
  submissions: 'submissions',
  submission_attachments: 'submissions',
  submission_attachment_history: 'submissions',
  submission_versions: 'submissions',
  rubric_assessments: 'submissions',
  tasks: 'tasks',
  task_attachments: 'tasks',
  task_extensions: 'tasks',
  task_markdown_cache: 'tasks',
  task_rubrics: 'tasks',
  rubric_criteria: 'tasks',
  rubric_levels: 'tasks',
  task_submission_counts: 'tasks',
  task_user_states: 'tasks',
  users: 'users',
  announcements: 'announcements',
};

/** The repository's migrations, and those each extension brings in its folder. */
const MIGRATION_FOLDERS = [
  resolve(__dirname, '..', '..', 'migrations'),
  ...EXTENSION_MODULES.map((module) => join(EXTENSIONS, module, 'migrations')).filter(existsSync),
];

/** The tables the migrations leave, in timestamp order: created, and not dropped again, by their `up`. */
function migratedTables(): string[] {
  const tables = new Set<string>();
  const files = MIGRATION_FOLDERS.flatMap((folder) =>
    readdirSync(folder)
      .filter((file) => file.endsWith('.ts'))
      .map((file) => ({ file, path: join(folder, file) })),
  ).sort((a, b) => a.file.localeCompare(b.file));
  for (const { path } of files) {
    const up = readFileSync(path, 'utf8').split(/async down\(/)[0];
    for (const [, verb, table] of up.matchAll(
      /\b(CREATE(?: UNLOGGED)? TABLE|DROP TABLE)(?: IF (?:NOT )?EXISTS)? (\w+)/gi,
    )) {
      if (verb.toUpperCase().startsWith('CREATE')) tables.add(table);
      else tables.delete(table);
    }
  }
  return [...tables].sort();
}

/** The tables `text` writes: in its SQL strings, and the one its entity maps. */
function writtenTables(text: string): string[] {
  const statements = stringLiterals(text).flatMap((sql) =>
    [...sql.matchAll(/\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+(\w+)/g)].map((match) => match[1]),
  );
  const entities = [...text.matchAll(/@Entity\('(\w+)'\)/g)].map((match) => match[1]);
  return [...statements, ...entities].filter((table) => table in TABLE_OWNERS);
}

/**
 * @Global() hides a module's dependants from their module's imports, where a cycle would go unseen; only
 * the configuration, which every module takes, is global.
 */
const GLOBAL_MODULE_FILES = ['config/config.module.ts'];

/** Packages that talk to the database; controllers, DTOs and mappers leave that to services. */
const DATABASE_PACKAGES = ['typeorm', '@nestjs/typeorm', 'pg', 'pg-query-stream'];
/** Files that hold SQL: the layer below the services. Mappers may take row types from them. */
const SQL_FILE = /\.(sql|queries|repository)$/;
/** The start of an SQL statement in a string; the code base writes SQL keywords in capitals. */
const SQL_TEXT =
  /\b(SELECT\s[\s\S]*\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|WITH\s+\w+\s+AS\s*\()\b/;

type Graph = Map<string, Map<string, string[]>>;

const ARCHITECTURE_DOC = resolve(__dirname, '..', '..', 'docs', 'architecture.md');

/** The lines of the first Markdown table under the `## heading` of `markdown`, as cells (header included). */
function tableUnder(markdown: string, heading: string): string[][] {
  const section = markdown.split(/^## /m).find((part) => part.startsWith(`${heading}\n`)) ?? '';
  const lines = section.split('\n');
  const start = lines.findIndex((line) => line.startsWith('|'));
  if (start < 0) return [];
  const end = lines.findIndex((line, i) => i > start && !line.startsWith('|'));
  return lines
    .slice(start, end < 0 ? undefined : end)
    .filter((line) => !/^\|[\s|:-]+\|$/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
}

/** The backticked names of a table cell: `` `a`, `b` `` → ['a', 'b']; `—` → []. */
const namesIn = (cell: string): string[] => [...cell.matchAll(/`([\w-]+)`/g)].map((match) => match[1]);

/**
 * The extension table of docs/architecture.md ("## Example extension"): a row per extension, its module and
 * the modules it imports, as in the import table.
 */
const extensionRows = (markdown: string): string[][] => tableUnder(markdown, 'Example extension').slice(1);

/** The module tables of docs/architecture.md ("## Modules", then the extensions): the module of each row. */
function documentedModules(markdown: string): string[] {
  return [...tableUnder(markdown, 'Modules').slice(1), ...extensionRows(markdown)].flatMap(([module]) =>
    namesIn(module),
  );
}

/**
 * The import tables of docs/architecture.md ("## Allowed imports", then the extensions): module → the modules
 * it imports.
 */
function documentedImports(markdown: string): Record<string, string[]> {
  const table: Record<string, string[]> = {};
  for (const [modules, imports] of [
    ...tableUnder(markdown, 'Allowed imports').slice(1),
    ...extensionRows(markdown),
  ]) {
    for (const module of namesIn(modules)) {
      if (module in table) throw new Error(`${module} has two rows in the import table`);
      table[module] = namesIn(imports).sort();
    }
  }
  return table;
}

interface SourceFile {
  /** Relative to src/, with forward slashes (an extension's: `../test/extension/…`). */
  path: string;
  module: string;
  text: string;
  /** Import specifiers, as written: static and dynamic imports, `require`, `export … from`. */
  imports: string[];
}

function importSpecifiers(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((file) => file.fileName);
}

/** The module of a path relative to src/: its folder there, an extension's, the root or outside. */
function moduleOf(path: string): string {
  const extension = EXTENSION_PATH.exec(path);
  if (extension) return extension[1];
  if (path.startsWith('../')) return OUTSIDE;
  return path.includes('/') ? path.split('/')[0] : ROOT;
}

/** The code of every module: src/, and the extensions' folders but their migrations. */
const readModuleSources = (): SourceFile[] => [
  ...readSources(SRC),
  ...EXTENSION_MODULES.flatMap((module) => readSources(join(EXTENSIONS, module))),
];

function readSources(dir: string): SourceFile[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'migrations' ? [] : readSources(full);
    if (!entry.name.endsWith('.ts') || entry.name.endsWith('.spec.ts')) return [];
    const path = relative(SRC, full).split(sep).join('/');
    const text = readFileSync(full, 'utf8');
    return [{ path, module: moduleOf(path), text, imports: importSpecifiers(text) }];
  });
}

/** The src/-relative path an import points to, or null for a package. */
function importedPath(file: SourceFile, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  // Through the file system: an extension's import climbs out of test/ and into src/.
  const target = relative(SRC, resolve(SRC, dirname(file.path), specifier));
  return target.split(sep).join('/');
}

/** Module → imported module → the importing files (for the messages). */
function moduleGraph(files: SourceFile[]): Graph {
  const graph: Graph = new Map();
  for (const file of files) {
    for (const specifier of file.imports) {
      const target = importedPath(file, specifier);
      if (target === null) continue;
      const to = moduleOf(target);
      if (to === file.module) continue;
      const edges = graph.get(file.module) ?? new Map<string, string[]>();
      graph.set(file.module, edges.set(to, [...(edges.get(to) ?? []), file.path]));
    }
  }
  return graph;
}

const adjacency = (graph: Graph): Record<string, string[]> =>
  Object.fromEntries([...graph].map(([from, edges]) => [from, [...edges.keys()]]));

/** A cycle as its imports, each with one file that makes it: `a → b (a/x.ts)`. */
const explainCycle = (graph: Graph, cycle: string[]): string[] =>
  cycle.slice(1).map((to, i) => `${cycle[i]} → ${to} (${graph.get(cycle[i])?.get(to)?.[0]})`);

/** One cycle of `graph` as a path that ends where it starts, or null when there is none. */
function findCycle(graph: Record<string, string[]>): string[] | null {
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (node: string): string[] | null => {
    if (path.includes(node)) return [...path.slice(path.indexOf(node)), node];
    if (done.has(node)) return null;
    path.push(node);
    for (const next of graph[node] ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    done.add(node);
    return null;
  };
  for (const node of Object.keys(graph)) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return null;
}

/** The string literals of `text` (a template's literal parts joined by spaces). */
function stringLiterals(text: string): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    const literal =
      ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)
        ? node.text
        : ts.isTemplateExpression(node)
          ? [node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join(' ')
          : null;
    if (literal !== null) found.push(literal);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile('file.ts', text, ts.ScriptTarget.Latest, true));
  return found;
}

/** The string literals of `text` that hold SQL. */
const sqlStrings = (text: string): string[] =>
  stringLiterals(text).filter((literal) => SQL_TEXT.test(literal));

describe('architecture: the tools of this test', () => {
  it('finds a cycle of a small graph, and none where there is none', () => {
    expect(findCycle({ a: ['b'], b: ['c'], c: ['a'], d: ['a'] })).toEqual(['a', 'b', 'c', 'a']);
    expect(findCycle({ d: ['a'], a: ['b'], b: ['c'], c: ['b'] })).toEqual(['b', 'c', 'b']);
    expect(findCycle({ a: ['a'] })).toEqual(['a', 'a']);
    expect(findCycle({ a: ['b', 'c'], b: ['c'], c: [], d: ['a', 'c'] })).toBeNull();
  });

  it('names the files that make each import of a cycle', () => {
    const graph: Graph = new Map([
      ['a', new Map([['b', ['a/x.ts']]])],
      ['b', new Map([['a', ['b/y.ts', 'b/z.ts']]])],
    ]);
    expect(explainCycle(graph, findCycle(adjacency(graph))!)).toEqual(['a → b (a/x.ts)', 'b → a (b/y.ts)']);
  });

  it('reads static, type-only, re-exported and dynamic imports', () => {
    const text = `import { A } from '../a/x';
      import type { B } from './b';
      export { C } from '../c/y';
      const d = () => import('../d/z');
      const e = require('pg');`;
    expect(importSpecifiers(text)).toEqual(['../a/x', './b', '../c/y', '../d/z', 'pg']);
  });

  it('reads the tables a file writes, in SQL and as an entity, not those it reads', () => {
    const text = `@Entity('users') class User {}
      const a = \`INSERT INTO tasks (id) VALUES ($1) ON CONFLICT DO UPDATE SET id = $1\`;
      const b = 'UPDATE classes c SET name = $1 FROM class_members m WHERE m.class_id = c.id';
      const c = "DELETE FROM submissions WHERE task_id IN (SELECT id FROM tasks)";
      const d = 'SELECT id FROM settings';`;
    expect(writtenTables(text).sort()).toEqual(['classes', 'submissions', 'tasks', 'users']);
  });

  it('tells SQL in strings from words in comments and prose', () => {
    const text = `// SELECT id FROM users: a comment
      const a = 'Select a file from the list';
      const b = \`SELECT id FROM classes WHERE id = \${id}\`;
      const c = "DELETE FROM tasks";`;
    expect(sqlStrings(text)).toEqual(['SELECT id FROM classes WHERE id =  ', 'DELETE FROM tasks']);
  });
});

describe('architecture: docs/architecture.md says what ALLOWED_IMPORTS says', () => {
  const markdown = readFileSync(ARCHITECTURE_DOC, 'utf8');
  const folders = [...foldersOf(SRC), ...EXTENSION_MODULES].sort();

  it('reads the two tables of a small document', () => {
    const doc = [
      '## Modules',
      '',
      '| module | owns |',
      '| ------ | ---- |',
      '| `a`    | the `x` of things |',
      '| `b`    | — |',
      '',
      '## Allowed imports',
      '',
      '| module     | imports    |',
      '| ---------- | ---------- |',
      '| `a`, `c`   | —          |',
      '| `b`        | `c`, `a`   |',
      '',
      '## Example extension',
      '',
      '| module | imports | where |',
      '| ------ | ------- | ----- |',
      '| `e`    | `a`     | `test/extension/e/`: things |',
      '',
      'After.',
    ].join('\n');
    expect(documentedModules(doc)).toEqual(['a', 'b', 'e']);
    expect(documentedImports(doc)).toEqual({ a: [], c: [], b: ['a', 'c'], e: ['a'] });
    expect(documentedModules('## Other\n\n| x |\n| - |\n| `y` |\n')).toEqual([]);
  });

  it('has one row per module folder of src/ and of test/extension/ in the module tables, and the same modules in ALLOWED_IMPORTS', () => {
    const documented = documentedModules(markdown);
    expect(documented.length).toBe(new Set(documented).size);
    expect([...documented].sort()).toEqual(folders);
    expect(Object.keys(ALLOWED_IMPORTS).sort()).toEqual(folders);
  });

  it('has the imports of ALLOWED_IMPORTS in the import table, for every module but the foundation', () => {
    const expected = Object.fromEntries(
      Object.entries(ALLOWED_IMPORTS)
        .filter(([module]) => !FOUNDATION.includes(module))
        .map(([module, deps]) => [module, [...deps].sort()]),
    );
    expect(documentedImports(markdown)).toEqual(expected);
  });

  it('says the foundation imports what ALLOWED_IMPORTS lets it: `common` and `database` only `config`', () => {
    expect(ALLOWED_IMPORTS.config).toEqual([]);
    expect(ALLOWED_IMPORTS.common).toEqual(['config']);
    expect(ALLOWED_IMPORTS.database).toEqual(['config']);
    expect(markdown.replace(/\s+/g, ' ')).toContain('`common` and `database` import only `config`');
  });
});

describe('architecture of src/ and of the extensions', () => {
  const files = readModuleSources();
  const graph = moduleGraph(files);
  const modules = [...new Set(files.map((file) => file.module))].filter((module) => module !== ROOT);

  it('is read: imports known to exist are seen', () => {
    expect([...(graph.get(ROOT)?.keys() ?? [])]).toEqual(expect.arrayContaining(['auth', 'tasks', 'health']));
    expect(graph.get('tasks')?.has('classes')).toBe(true);
    expect(graph.get('common')?.has('config')).toBe(true);
    expect(EXTENSION_MODULES).toContain('announcements');
    expect(graph.get('announcements')?.has('notifications')).toBe(true);
  });

  it('reads the module of a path: a folder of src/, an extension, the root or outside', () => {
    expect(moduleOf('tasks/dto/task.dto.ts')).toBe('tasks');
    expect(moduleOf('../test/extension/announcements/dto/x.ts')).toBe('announcements');
    expect(moduleOf('app.module.ts')).toBe(ROOT);
    expect(moduleOf('../test/utils/test-app.ts')).toBe(OUTSIDE);
  });

  it('lets an extension use only what the modules of src/ offer it: no repository or entity of theirs', () => {
    const offences = files
      .filter((file) => EXTENSION_PATH.test(file.path))
      .flatMap((file) =>
        file.imports
          .map((specifier) => importedPath(file, specifier))
          .filter((target): target is string => target !== null && !EXTENSION_PATH.test(target))
          .filter((target) => /\.(repository|entity)$/.test(target))
          .map((target) => `${file.path} imports ${target}`),
      );
    expect(offences).toEqual([]);
  });

  it('names every module of src/ in ALLOWED_IMPORTS, and the allowed imports form no cycle', () => {
    expect(modules.filter((module) => !(module in ALLOWED_IMPORTS))).toEqual([]);
    const allowed = Object.fromEntries(
      Object.entries(ALLOWED_IMPORTS).map(([module, deps]) => [
        module,
        FOUNDATION.includes(module) ? deps : [...FOUNDATION, ...deps],
      ]),
    );
    expect(findCycle(allowed)).toBeNull();
  });

  it('has no module import outside ALLOWED_IMPORTS, and no entry there that no import uses', () => {
    const refused: string[] = [];
    for (const [from, edges] of graph) {
      if (from === ROOT) continue;
      for (const [to, importers] of edges) {
        const allowed =
          (!FOUNDATION.includes(from) && FOUNDATION.includes(to)) || ALLOWED_IMPORTS[from]?.includes(to);
        if (!allowed) refused.push(`${from} → ${to} (${importers.join(', ')})`);
      }
    }
    expect(refused).toEqual([]);
    const unused = Object.entries(ALLOWED_IMPORTS).flatMap(([from, deps]) =>
      deps.filter((to) => !graph.get(from)?.has(to)).map((to) => `${from} → ${to} is imported nowhere`),
    );
    expect(unused).toEqual([]);
  });

  it('has no import cycle between the modules, the foundation included', () => {
    const cycle = findCycle(adjacency(graph));
    expect(cycle && explainCycle(graph, cycle)).toBeNull();
  });

  it('keeps users below auth and mail below notifications, the two directions chosen', () => {
    expect(graph.get('auth')?.has('users')).toBe(true);
    expect(graph.get('users')?.has('auth')).toBe(false);
    expect(graph.get('notifications')?.has('mail')).toBe(true);
    expect([...(graph.get('mail')?.keys() ?? [])]).toEqual(['config']);
  });

  it('has settings and schools in modules of their own, which users, auth and the CLI use', () => {
    expect(graph.get('auth')?.has('settings')).toBe(true);
    expect(graph.get('users')?.has('schools')).toBe(true);
    expect(graph.get('cli')?.has('settings')).toBe(true);
    expect(files.filter((file) => /^users\/.*(setting|school)/.test(file.path)).map((f) => f.path)).toEqual(
      [],
    );
  });

  it('has one zoned-time module, in common', () => {
    expect(files.filter((file) => file.path.includes('zoned-time')).map((file) => file.path)).toEqual([
      'common/utils/zoned-time.ts',
    ]);
  });

  it('lets no module import the composition root', () => {
    const importers = files.filter(
      (file) =>
        file.module !== ROOT &&
        file.imports.some((specifier) => moduleOf(importedPath(file, specifier) ?? 'package/') === ROOT),
    );
    expect(importers.map((file) => file.path)).toEqual([]);
  });

  it('gives every table of the migrations one owner in TABLE_OWNERS, a module', () => {
    expect(Object.keys(TABLE_OWNERS).sort()).toEqual(migratedTables());
    expect(Object.values(TABLE_OWNERS).filter((module) => !modules.includes(module))).toEqual([]);
  });

  it('writes each table only in the module that owns it', () => {
    const offences = files.flatMap((file) =>
      writtenTables(file.text)
        .filter((table) => TABLE_OWNERS[table] !== file.module)
        .map((table) => `${file.path} writes ${table}, owned by ${TABLE_OWNERS[table]}`),
    );
    expect(offences).toEqual([]);
  });

  it('has no @Global() module but the configuration, and no forwardRef', () => {
    expect(files.filter((file) => /@Global\(\)/.test(file.text)).map((file) => file.path)).toEqual(
      GLOBAL_MODULE_FILES,
    );
    expect(files.filter((file) => /\bforwardRef\(/.test(file.text)).map((file) => file.path)).toEqual([]);
  });

  it('keeps the database out of controllers, DTOs, mappers and response shapes', () => {
    const controllersAndDtos = /(\.controller|\/dto\/.*)\.ts$/;
    const surface = files.filter((file) =>
      /(\.controller|\.mapper|\.response|\/dto\/.*)\.ts$/.test(file.path),
    );
    expect(surface.filter((file) => file.path.endsWith('.controller.ts')).length).toBeGreaterThan(5);
    const offences = surface.flatMap((file) => [
      ...file.imports
        .filter(
          (specifier) =>
            DATABASE_PACKAGES.includes(specifier) ||
            (controllersAndDtos.test(file.path) && SQL_FILE.test(specifier)),
        )
        .map((specifier) => `${file.path} imports ${specifier}`),
      ...sqlStrings(file.text).map((sql) => `${file.path} holds SQL: ${sql.slice(0, 60)}`),
    ]);
    expect(offences).toEqual([]);
  });

  it('opens transactions only through Transactions, which alone makes a Tx', () => {
    const offences = files
      .filter(
        (file) => file.path !== 'database/transactions.ts' && /\.transaction\(|\bas Tx\b/.test(file.text),
      )
      .map((file) => file.path);
    expect(offences).toEqual([]);
  });
});
