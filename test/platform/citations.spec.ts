import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

/**
 * Comments, tests, migrations, scripts and docs cite only what the repository holds: the rule stated plainly,
 * the service's OpenAPI document, or a docs/ page by its heading. The product specification's files are not
 * in the repository, so a file name of theirs, their upper-case names or a section number ("§" and a digit)
 * would point a reader at nothing. This file builds its pattern from escapes, so it is checked too.
 */

const ROOT = resolve(__dirname, '..', '..');
const CHECKED = ['src', 'test', 'migrations', 'bench', 'scripts', 'docs', 'README.md'];
const SECTION_SIGN = '\u00a7';
/** The documents' upper-case names, spelled so that this file does not cite them. */
const [SPEC_NAME, CONTRACT_NAME] = ['spec', 'contract'].map((name) => name.toUpperCase());
const NAMES = [SPEC_NAME, CONTRACT_NAME];

/** A document's file name (`<NAME>.md`), its name as a word, or a section sign before a digit. */
const CITATION = new RegExp(
  [...NAMES.map((name) => `${name}\\.md`), `\\b(?:${NAMES.join('|')})\\b`, `${SECTION_SIGN}\\s*\\d`].join(
    '|',
  ),
);

function filesUnder(path: string): string[] {
  const entries = readdirSync(path, { withFileTypes: true });
  return entries.flatMap((entry) => {
    const full = join(path, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : filesUnder(full);
    return entry.isFile() ? [full] : [];
  });
}

function citationsIn(text: string): { line: number; text: string }[] {
  return text
    .split('\n')
    .map((line, index) => ({ line: index + 1, text: line.trim() }))
    .filter(({ text: line }) => CITATION.test(line));
}

describe('citations: the tools of this test', () => {
  it('finds citations of the specification files and their sections', () => {
    const cited = [
      `/** Members' own deadlines (${CONTRACT_NAME} \u00a75.1). */`,
      `Points that ${SPEC_NAME}.md leaves open`,
      `see ${CONTRACT_NAME}.md`,
      `(${SPEC_NAME} "Errors")`,
      'the late flag (\u00a7 5.2)',
    ];
    expect(cited.filter((line) => !CITATION.test(line))).toEqual([]);
  });

  it('lets identifiers, other standards and the generic words through', () => {
    const plain = [
      'const TEXT_SPECIAL = /[\\\\;,]/g;',
      '// RFC 5545, section 3.6.1: without DTEND and DURATION',
      'the specification names no code for it',
      'SPECIFIC_ERROR, CONTRACTS_TABLE',
      'the \u00a7 sign alone',
    ];
    expect(plain.filter((line) => CITATION.test(line))).toEqual([]);
  });
});

describe('citations in the repository', () => {
  const files = CHECKED.flatMap((name) => {
    const full = join(ROOT, name);
    return name.includes('.') ? [full] : filesUnder(full);
  });

  it('reads the checked folders', () => {
    const paths = files.map((file) => relative(ROOT, file).split(sep).join('/'));
    expect(paths).toEqual(
      expect.arrayContaining(['docs/decisions.md', 'src/bootstrap.ts', 'test/platform/citations.spec.ts']),
    );
  });

  it('cites no section or file of the specification documents, which the repository does not hold', () => {
    const found = files.flatMap((file) => {
      const text = readFileSync(file);
      if (text.includes(0)) return []; // binary
      const path = relative(ROOT, file).split(sep).join('/');
      return citationsIn(text.toString('utf8')).map(({ line, text: cited }) => `${path}:${line}: ${cited}`);
    });
    expect(found).toEqual([]);
  });
});
