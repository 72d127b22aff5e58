import { ParseContext } from '../ai-provider';
import { extractTimeOptions } from './time-extraction';

/** Wednesday 2026-03-04 09:00 in New York (EST; EDT from Sunday 8 March). */
const NEW_YORK: ParseContext = { timezone: 'America/New_York', now: new Date('2026-03-04T14:00:00Z') };
/** Friday 2026-05-01 08:00 in Auckland, still Thursday in UTC. */
const AUCKLAND: ParseContext = { timezone: 'Pacific/Auckland', now: new Date('2026-04-30T20:00:00Z') };
/** Monday 2026-09-14 10:00 in Shanghai. */
const SHANGHAI: ParseContext = { timezone: 'Asia/Shanghai', now: new Date('2026-09-14T02:00:00Z') };

/** The deadlines of the options as the caller's clocks show them ("2026-03-06 23:59"). */
function dues(text: string, context: ParseContext = NEW_YORK): string[] {
  return (extractTimeOptions(text, context) ?? []).map((option) =>
    option.dueAt === null
      ? 'none'
      : new Date(option.dueAt).toLocaleString('sv-SE', { timeZone: context.timezone }).slice(0, 16),
  );
}
const firstDue = (text: string, context: ParseContext = NEW_YORK): string | undefined =>
  dues(text, context)[0];

describe('extractTimeOptions', () => {
  it.each([
    ['Lab report due Oct 3 by 2pm', '2026-10-03 14:00'],
    ['quiz Thursday @ 10:15', '2026-03-05 10:15'],
    ['Science report due Friday arvo 3pm', '2026-03-06 15:00'],
    ['hand in Monday 1300', '2026-03-09 13:00'],
    ['Permission slips by 6 tomorrow', '2026-03-05 18:00'],
    ['Journals due at quarter past four today', '2026-03-04 16:15'],
    ['Revision booklet due by half past three on Monday', '2026-03-09 15:30'],
    ['Submit the project by 5 pm day after tomorrow', '2026-03-06 17:00'],
  ])('keeps a time written after or around the date: %s', (text, due) => {
    expect(firstDue(text)).toBe(due);
  });

  it.each([
    ['read sections 4–6 by Tuesday', '2026-03-10 23:59'],
    ['questions 12-15 due Nov 2', '2026-11-02 23:59'],
    ['Math homework p. 45 #1-19 odd, due tomorrow', '2026-03-05 23:59'],
    ['Chem midterm Thursday at 8:30am. Study chapters 5–7.', '2026-03-05 08:30'],
  ])('does not read numbers and number ranges as times: %s', (text, due) => {
    expect(firstDue(text)).toBe(due);
  });

  it('reads midnight as the end of the day it names', () => {
    expect(dues('Poster due Saturday at midnight')).toEqual(['2026-03-07 23:59', '2026-03-14 23:59']);
    expect(dues('Upload the presentation by midnight tonight')).toEqual(['2026-03-04 23:59']);
  });

  it.each([
    ['History essay — submit by the 15th', '2026-03-15 23:59'],
    ['Quiz on the 2nd', '2026-04-02 23:59'],
    ['Science fair project due in a fortnight', '2026-03-18 23:59'],
    ['Book report due a week from Friday', '2026-03-13 23:59'],
    ['Spelling test Tuesday week', '2026-03-17 23:59'],
    ['Science project due 3 weeks from today', '2026-03-25 23:59'],
    ['Study guide is due the day before the test on Friday.', '2026-03-05 23:59'],
    ['Quiz on chapter 2 was moved from Monday to Thursday.', '2026-03-05 23:59'],
    ['Turn in your reading log the Monday after break (Mar 16)', '2026-03-16 23:59'],
  ])('reads relative phrases: %s', (text, due) => {
    expect(firstDue(text)).toBe(due);
  });

  it('reads "end of the week" as Friday, else Sunday; "end of next week" a week later', () => {
    expect(dues('Finish the worksheet by end of the week')).toEqual(['2026-03-06 23:59', '2026-03-08 23:59']);
    expect(firstDue('Turn in your poster by the end of next week')).toBe('2026-03-13 23:59');
  });

  it('reads "between Monday and Wednesday" as a start and the later bound as the deadline', () => {
    expect(extractTimeOptions('Group work: submit between Monday and Wednesday', NEW_YORK)?.[0]).toEqual({
      startAt: '2026-03-09T04:00:00.000Z',
      dueAt: '2026-03-12T03:59:00.000Z',
    });
  });

  it.each([
    'Great work today, everyone! See you Monday.',
    'Reminder: wear your uniform on Monday for the class photo.',
    'Office hours this week: Tuesday 3–4pm in room 214.',
    'Choir practice every Wednesday 3:30-4:30',
    "Don't forget the school concert tomorrow at 7pm!",
    'Well done on the science test yesterday!',
    'Spring break starts Friday — no homework over the break!',
    'Read the whole book',
  ])('finds no deadline in "%s"', (text) => {
    expect(extractTimeOptions(text, NEW_YORK)?.[0]?.dueAt ?? null).toBeNull();
  });

  it("reads a task's date without a due word as its deadline", () => {
    expect(firstDue('Vocabulary quiz next Monday')).toBe('2026-03-09 23:59');
    expect(firstDue('Please bring your signed forms on Friday')).toBe('2026-03-06 23:59');
  });

  it('does not read "12 noon" after a date as the year 2012', () => {
    expect(firstDue('English essay: deadline 31 Mar, 12 noon')).toBe('2026-03-31 12:00');
  });

  it('reads a time in the zone the text names, with that zone’s summer time', () => {
    const berlinInSeptember = extractTimeOptions('Essay due 5pm CET Friday', SHANGHAI)?.[0];
    expect(berlinInSeptember?.dueAt).toBe('2026-09-18T15:00:00.000Z');
    expect(extractTimeOptions('Final project due Mar 20 @ 5 PM PT', NEW_YORK)?.[0]?.dueAt).toBe(
      '2026-03-21T00:00:00.000Z',
    );
  });

  it('never puts a deadline in the past first while a later reading exists', () => {
    expect(firstDue('Extra credit due 8am')).toBe('2026-03-05 08:00');
    expect(firstDue('Lab report due by 5')).toBe('2026-03-04 17:00');
    // 18:00 in Pago Pago: "by 7" is in an hour, not tomorrow morning.
    const evening = { timezone: 'Pacific/Pago_Pago', now: new Date('2026-06-06T05:00:00Z') };
    expect(firstDue('Submit your worksheet by 7', evening)).toBe('2026-06-05 19:00');
    // On a Wednesday, "Wednesday" is next week's first.
    expect(dues('Quiz due Wednesday 6pm')).toEqual(['2026-03-11 18:00', '2026-03-04 18:00']);
  });

  it("reads the caller's today across the date line", () => {
    expect(firstDue('Te reo homework due tomorrow', AUCKLAND)).toBe('2026-05-02 23:59');
  });

  it('reads numeric dates day first where people write them so', () => {
    expect(dues('Poetry assignment due 5/6', AUCKLAND)).toEqual(['2026-06-05 23:59', '2026-05-06 23:59']);
    expect(dues('Poetry assignment due 5/6', NEW_YORK)).toEqual(['2026-05-06 23:59', '2026-06-05 23:59']);
    expect(firstDue('Project due 3.4.', NEW_YORK)).toBe('2026-04-03 23:59');
    const kolkata = { timezone: 'Asia/Kolkata', now: new Date('2026-01-18T14:30:00Z') };
    expect(firstDue('Computer project due 5 pm IST Jan 30', kolkata)).toBe('2026-01-30 17:00');
  });

  it('moves a time in the spring-forward gap forward by the gap', () => {
    expect(extractTimeOptions('Timeline project: due Sunday March 8, 2:30am', NEW_YORK)?.[0]?.dueAt).toBe(
      '2026-03-08T07:30:00.000Z',
    );
  });

  it("reads 本周五 as this week's Friday", () => {
    expect(firstDue('英语小组报告\n本周五晚上10点截止', SHANGHAI)).toBe('2026-09-18 22:00');
  });

  describe('ordinary words, number words, zones and relative dates read by rule', () => {
    it.each([
      // A weekday's short form that is another word: a lower-case noun, a name after a title.
      ['Bring sun cream on Monday', '2026-03-09 23:59'],
      ['Mrs Sun wants the posters by Friday', '2026-03-06 23:59'],
      // Minutes past or to an hour, in digits or words.
      ['Quiz on Friday at 10 past 2', '2026-03-06 14:10'],
      ['Posters due today at ten past four', '2026-03-04 16:10'],
      ['Spelling test tomorrow at twenty to nine', '2026-03-05 08:40'],
      // British "half six", and a 24-hour time with an h.
      ['Parents must reply by half six tomorrow', '2026-03-05 18:30'],
      ['Test on Friday at 14h00', '2026-03-06 14:00'],
      // A zone said by its region after the time: 7 pm in Los Angeles is 10 pm in New York.
      ['Essay due Thursday 7 pm Pacific', '2026-03-05 22:00'],
      ['Entry form due Friday 9am London time', '2026-03-06 04:00'],
      // A hyphenated hand-in is a deadline word like "hand in".
      ['Coursework hand-in is Friday 4pm', '2026-03-06 16:00'],
      // Counted from the date the text names, not from today.
      ['Revision notes due the day before the test on Friday', '2026-03-05 23:59'],
      ['Forms due two days before the trip on the 14th', '2026-03-12 23:59'],
      // The start of the school day, when no time is written.
      ['Essays due first thing Monday', '2026-03-09 09:00'],
      // A newsletter's month heading is no date: the dated line is.
      [
        'Science news\nNovember\n- 4 Nov: energy worksheet due\n- 12 Nov: parents evening',
        '2026-11-04 23:59',
      ],
      // A chat message's timestamp is no deadline.
      ['[10:02 AM] Mr Lee: Science quiz Friday, revise chapter 2', '2026-03-06 23:59'],
      ['16:40 Ms Park: Poster due Monday', '2026-03-09 23:59'],
    ])('%j → %s', (text, due) => {
      expect(firstDue(text)).toBe(due);
    });

    it.each([
      // An ordinal that qualifies a noun is no day of the month.
      'Homework: the 2nd draft of your essay',
      // A treat on a day is no deadline, whatever task words the rest of the sentence holds.
      'Pizza party Friday for everyone who finished the reading challenge!',
    ])('%j sets no deadline', (text) => {
      expect(extractTimeOptions(text, NEW_YORK)).toBeNull();
    });
  });
});
