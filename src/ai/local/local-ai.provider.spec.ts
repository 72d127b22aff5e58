import { ParseContext, ParseResult } from '../ai-provider';
import { LocalAiProvider } from './local-ai.provider';

/** Wednesday 2026-03-04 02:00 UTC: 10:00 Wednesday in Shanghai, 21:00 Tuesday (EST) in New York. */
const NOW = new Date('2026-03-04T02:00:00.000Z');
const SHANGHAI: ParseContext = { timezone: 'Asia/Shanghai', now: NOW };
const NEW_YORK: ParseContext = { timezone: 'America/New_York', now: NOW };
const UTC: ParseContext = { timezone: 'UTC', now: NOW };

const provider = new LocalAiProvider();
const parse = (
  text: string,
  context: ParseContext,
  attachments: { name: string; text: string }[] = [],
): Promise<ParseResult> => provider.parse({ text, attachments }, context);
const dueTimes = async (text: string, context: ParseContext): Promise<(string | null)[]> =>
  ((await parse(text, context)).timeOptions ?? []).map((option) => option.dueAt);

describe('LocalAiProvider', () => {
  afterAll(() => provider.onApplicationShutdown());

  describe('dates in the caller time zone', () => {
    it.each([
      [SHANGHAI, '2026-03-05T15:59:00.000Z'],
      [NEW_YORK, '2026-03-05T04:59:00.000Z'],
      [UTC, '2026-03-05T23:59:00.000Z'],
    ])('reads "tomorrow" as the end of the next local day (%#)', async (context, due) => {
      expect(await dueTimes('Worksheet due tomorrow', context)).toEqual([due]);
    });

    it.each([
      [SHANGHAI, '2026-03-20T15:59:00.000Z'],
      [NEW_YORK, '2026-03-21T03:59:00.000Z'],
      [UTC, '2026-03-20T23:59:00.000Z'],
    ])('keeps a stated local time, across the DST change of New York (%#)', async (context, due) => {
      expect(await dueTimes('Final report deadline 2026-03-20 23:59', context)).toEqual([due]);
    });

    it("uses the offset in force on the date, not today's (New York switches to EDT on 8 March)", async () => {
      expect(await dueTimes('Lab due March 10 at 5pm', NEW_YORK)).toEqual(['2026-03-10T21:00:00.000Z']);
      expect(await dueTimes('Lab due March 6 at 5pm', NEW_YORK)).toEqual(['2026-03-06T22:00:00.000Z']);
    });

    it("reads a day and month that already passed as next year's", async () => {
      expect(await dueTimes('Due January 15', UTC)).toEqual(['2027-01-15T23:59:00.000Z']);
    });

    it('takes a range as start and due time; a date without time starts at 00:00', async () => {
      const result = await parse('Lab report\nAvailable from March 5 to March 12 11pm', SHANGHAI);
      expect(result.timeOptions).toEqual([
        { startAt: '2026-03-04T16:00:00.000Z', dueAt: '2026-03-12T15:00:00.000Z' },
      ]);
    });

    it('tells start from due by the words before each date', async () => {
      const result = await parse('Project opens March 9 and is due March 13 at 5pm', UTC);
      expect(result.timeOptions).toEqual([
        { startAt: '2026-03-09T00:00:00.000Z', dueAt: '2026-03-13T17:00:00.000Z' },
      ]);
    });

    it('reads Chinese dates', async () => {
      const result = await parse('数学作业\n3月15日下午5点前提交，不接受迟交', SHANGHAI);
      expect(result.timeOptions).toEqual([{ startAt: null, dueAt: '2026-03-15T09:00:00.000Z' }]);
      expect(result.allowLateSubmission).toBe(false);
      expect(result.title).toBe('数学作业');
    });

    it('answers one option with null times when the text names no date', async () => {
      expect((await parse('Read the whole book', UTC)).timeOptions).toEqual([{ startAt: null, dueAt: null }]);
    });

    it('takes dates from text attachments only when the text has none', async () => {
      const attachment = { name: 'notes.txt', text: 'Hand in by March 20' };
      expect((await parse('Essay', UTC, [attachment])).timeOptions).toEqual([
        { startAt: null, dueAt: '2026-03-20T23:59:00.000Z' },
      ]);
      expect((await parse('Essay due March 10', UTC, [attachment])).timeOptions).toEqual([
        { startAt: null, dueAt: '2026-03-10T23:59:00.000Z' },
      ]);
    });
  });

  describe('ambiguous dates give several options, the likeliest first', () => {
    it.each([
      [SHANGHAI, ['2026-03-04T09:00:00.000Z', '2026-04-03T09:00:00.000Z']],
      [NEW_YORK, ['2026-03-04T22:00:00.000Z', '2026-04-03T21:00:00.000Z']],
      [UTC, ['2026-03-04T17:00:00.000Z', '2026-04-03T17:00:00.000Z']],
    ])('3/4 is March 4 or April 3 (%#)', async (context, dues) => {
      expect(await dueTimes('Homework 3\nDue 3/4 at 5pm', context)).toEqual(dues);
    });

    it('a date that cannot be day-first is not ambiguous', async () => {
      expect(await dueTimes('due 3/14', UTC)).toEqual(['2026-03-14T23:59:00.000Z']);
    });

    it.each([
      [SHANGHAI, ['2026-03-06T15:59:00.000Z', '2026-03-13T15:59:00.000Z']],
      [NEW_YORK, ['2026-03-07T04:59:00.000Z', '2026-03-14T03:59:00.000Z']],
      [UTC, ['2026-03-06T23:59:00.000Z', '2026-03-13T23:59:00.000Z']],
    ])("a bare weekday is this week's or next week's (%#)", async (context, dues) => {
      expect(await dueTimes('Essay\nSubmit by Friday', context)).toEqual(dues);
    });

    it('a weekday said on that very day is a week later, or else today', async () => {
      expect(await dueTimes('Quiz due Wednesday 6pm', UTC)).toEqual([
        '2026-03-11T18:00:00.000Z',
        '2026-03-04T18:00:00.000Z',
      ]);
    });

    it('a qualified weekday is not ambiguous', async () => {
      expect(await dueTimes('due next Friday', UTC)).toHaveLength(1);
      expect(await dueTimes('due this Friday', UTC)).toEqual(['2026-03-06T23:59:00.000Z']);
    });

    it('moves both weekdays together and keeps the deadline after the start', async () => {
      const result = await parse('Project starts Monday and is due Friday 5pm', UTC);
      expect(result.timeOptions).toEqual([
        { startAt: '2026-03-09T00:00:00.000Z', dueAt: '2026-03-13T17:00:00.000Z' },
        { startAt: '2026-03-16T00:00:00.000Z', dueAt: '2026-03-20T17:00:00.000Z' },
      ]);
    });

    it('"end of the month" is this month\'s last day or next month\'s', async () => {
      expect(await dueTimes('Essay due by end of the month', UTC)).toEqual([
        '2026-03-31T23:59:00.000Z',
        '2026-04-30T23:59:00.000Z',
      ]);
    });

    it('"end of the month" on a weekend adds the last working day (3 options at most)', async () => {
      const may = { timezone: 'Asia/Shanghai', now: new Date('2026-05-12T04:00:00.000Z') };
      expect(await dueTimes('Portfolio due by the end of the month', may)).toEqual([
        '2026-05-31T15:59:00.000Z',
        '2026-05-29T15:59:00.000Z',
        '2026-06-30T15:59:00.000Z',
      ]);
    });
  });

  describe('late submissions', () => {
    it.each([
      ['Late submissions allowed.', true],
      ['We accept late work until Sunday.', true],
      ['No late submissions.', false],
      ['Late submissions will not be accepted.', false],
      ['Late work is not accepted', false],
      ['允许迟交', true],
      ['逾期不收', false],
      ['Please do not be late to class.', null],
      ['Write an essay.', null],
    ])('%s → %s', async (text, expected) => {
      expect((await parse(text, UTC)).allowLateSubmission).toBe(expected);
    });
  });

  describe('title and Markdown', () => {
    it('takes the first line as title and the rest as Markdown', async () => {
      const text = [
        '# Lab 2: Sorting',
        'Implement two sorting algorithms.',
        'Requirements:',
        '• merge sort',
        '• quick sort',
        '1) write tests',
        '2) measure time',
        'Details at https://example.com/lab2.',
      ].join('\n');
      const result = await parse(text, UTC);
      expect(result.title).toBe('Lab 2: Sorting');
      expect(result.description).toBe(
        [
          'Implement two sorting algorithms.',
          '',
          '### Requirements',
          '',
          '- merge sort',
          '- quick sort',
          '1. write tests',
          '2. measure time',
          '',
          'Details at <https://example.com/lab2>.',
        ].join('\n'),
      );
    });

    it('keeps a one-line text as description too', async () => {
      const result = await parse('Essay due Friday', UTC);
      expect(result).toMatchObject({ title: 'Essay due Friday', description: 'Essay due Friday' });
    });

    it('cuts a long first line at its first sentence, and at 80 characters at most, at a word', async () => {
      const sentence = 'Write a short story about the sea.';
      const long = `${sentence} ${'More words follow here. '.repeat(10)}`;
      const result = await parse(long, UTC);
      expect(result.title).toBe('Write a short story about the sea');
      expect(result.description).toBe(long.trim());
      const endless = 'word '.repeat(100).trim();
      expect((await parse(endless, UTC)).title).toBe(`Word ${'word '.repeat(13)}word…`);
    });

    it('counts characters, not UTF-16 units, and never cuts a character in two', async () => {
      expect((await parse('𝒜'.repeat(80), UTC)).title).toBe('𝒜'.repeat(80));
      expect((await parse('𝒜'.repeat(100), UTC)).title).toBe(`${'𝒜'.repeat(79)}…`);
    });

    it('answers null title and description for blank text', async () => {
      expect(await parse('   \n  ', UTC)).toEqual({
        title: null,
        timeOptions: [{ startAt: null, dueAt: null }],
        allowLateSubmission: null,
        description: null,
      });
    });
  });

  it('is deterministic', async () => {
    const text = 'Homework 3\nDue 3/4 at 5pm. Late submissions allowed.';
    expect(await parse(text, NEW_YORK)).toEqual(await parse(text, NEW_YORK));
  });

  it('refuses a parse at once when its thread is busy and the queue is full', async () => {
    const oneWaiting = new LocalAiProvider(1, 1);
    try {
      const input = { text: 'Worksheet due tomorrow', attachments: [] };
      const [running, waiting, refused] = await Promise.allSettled(
        [1, 2, 3].map(() => oneWaiting.parse(input, UTC)),
      );
      expect(running).toMatchObject({ status: 'fulfilled', value: { title: 'Worksheet due tomorrow' } });
      expect(waiting).toMatchObject({ status: 'fulfilled', value: { title: 'Worksheet due tomorrow' } });
      expect(refused).toMatchObject({ status: 'rejected', reason: new Error('Task queue is at limit') });
    } finally {
      await oneWaiting.onApplicationShutdown();
    }
  });
});
