import { ModelOutputError, readModelOutput } from './model-output';

const valid = {
  title: '  Essay  ',
  timeOptions: [{ startAt: null, dueAt: '2026-03-06T17:00:00+08:00' }],
  allowLateSubmission: false,
  description: '## Essay\n\nWrite it.',
};

describe('readModelOutput', () => {
  it('normalizes a valid answer: trimmed text, UTC timestamps', () => {
    expect(readModelOutput(valid)).toEqual({
      title: 'Essay',
      timeOptions: [{ startAt: null, dueAt: '2026-03-06T09:00:00.000Z' }],
      allowLateSubmission: false,
      description: '## Essay\n\nWrite it.',
    });
  });

  it('keeps the first 3 of more options when every option is valid', () => {
    const options = [1, 2, 3, 4].map((day) => ({ startAt: null, dueAt: `2026-03-0${day}T10:00:00Z` }));
    expect(readModelOutput({ ...valid, timeOptions: options }).timeOptions).toHaveLength(3);
  });

  it('reads empty strings as null and cuts an over-long title to 80 characters, at a word', () => {
    const result = readModelOutput({ ...valid, title: 'x'.repeat(300), description: '   ' });
    expect(result.title).toHaveLength(80);
    const words = readModelOutput({ ...valid, title: 'Read the chapter '.repeat(10) }).title!;
    expect(words).toBe(`${'Read the chapter '.repeat(4)}Read the…`);
    expect(result.description).toBeNull();
  });

  it('counts title characters, not UTF-16 units, and never cuts a character in two', () => {
    expect(readModelOutput({ ...valid, title: '😀'.repeat(80) }).title).toBe('😀'.repeat(80));
    expect(readModelOutput({ ...valid, title: '😀'.repeat(81) }).title).toBe(`${'😀'.repeat(79)}…`);
  });

  it.each([
    ['not an object', []],
    ['a missing key', { title: 'x', timeOptions: [{ startAt: null, dueAt: null }], description: null }],
    ['no options', { ...valid, timeOptions: [] }],
    ['options not an array', { ...valid, timeOptions: { startAt: null, dueAt: null } }],
    ['an option without dueAt', { ...valid, timeOptions: [{ startAt: null }] }],
    ['a timestamp without offset', { ...valid, timeOptions: [{ startAt: null, dueAt: '2026-03-06 17:00' }] }],
    ['a timestamp that is a number', { ...valid, timeOptions: [{ startAt: null, dueAt: 1772787600000 }] }],
    [
      'due before start',
      { ...valid, timeOptions: [{ startAt: '2026-03-06T00:00:00Z', dueAt: '2026-03-05T00:00:00Z' }] },
    ],
    [
      'an invalid 4th option',
      { ...valid, timeOptions: [...Array(3).fill(valid.timeOptions[0]), { startAt: 'soon', dueAt: null }] },
    ],
    ['allowLateSubmission as a string', { ...valid, allowLateSubmission: 'yes' }],
    ['title as a number', { ...valid, title: 42 }],
    ['an endless description', { ...valid, description: 'x'.repeat(100_001) }],
  ])('refuses %s', (_case, output) => {
    expect(() => readModelOutput(output)).toThrow(ModelOutputError);
  });
});
