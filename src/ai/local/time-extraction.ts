import * as chrono from 'chrono-node';
import { offsetMinutesAt } from '../../common/utils/zoned-time';
import { MAX_TIME_OPTIONS, ParseContext, TimeOption } from '../ai-provider';
import {
  addDays,
  endOfMonth,
  instantOf,
  sameDate,
  WallDate,
  WallTime,
  wallTimeAt,
  weekdayOf,
} from './wall-time';

/**
 * Ways to read an ambiguous date mention. `default` is the most likely one; the others exist only for
 * mentions that allow them, and each becomes one more time option.
 */
type Reading = 'default' | 'dayFirst' | 'followingWeek' | 'lastWorkingDay' | 'nextMonthEnd';

interface Mention {
  readings: Map<Reading, WallDate>;
  /** Hour and minute when the text states them. */
  time: { hour: number; minute: number } | null;
  /** A bare weekday ("Friday"): its date is only implied. */
  weekdayOnly: boolean;
}

type Slot = 'start' | 'due';

/** Words before a date that say what it is; the one nearest the date wins. */
const START_WORDS =
  /\b(?:start|starts|starting|begin|begins|beginning|open|opens|opening|available|from|release|released|assigned)\b|开始|发布|起/gi;
const DUE_WORDS =
  /\b(?:due|deadline|by|before|until|till|submit|submitted|submission|close|closes|closing|end|ends|no later than)\b|截止|提交|之前|以前/gi;
/** Chinese puts "before" after the date: 3月15日前提交. */
const DUE_AFTER = /^\s*(?:之前|以前|前|截止)/;
const WEEKDAY_QUALIFIER = /\b(?:this|next|last|coming|following|previous)\b|这|本|下|上/i;
const CJK = /[\u3400-\u9fff]/;
const LOOK_BEHIND = 48;
const END_OF_MONTH_TAG = 'parser/ENEndOfCurrentMonthParser';
/** Numeric dates like 3/4: the only ones a day-first reading can change. */
const SLASH_DATE_TAG = 'parser/SlashDateFormatParser';

const DEFAULT_TIME: Record<Slot, { hour: number; minute: number }> = {
  start: { hour: 0, minute: 0 },
  due: { hour: 23, minute: 59 },
};

function lastMatchIndex(pattern: RegExp, text: string): number {
  let last = -1;
  for (const match of text.matchAll(pattern)) last = match.index;
  return last;
}

/** Start or due, from the words right before the mention (same line), else unknown. */
function slotOf(text: string, result: chrono.ParsedResult, previousEnd: number): Slot | null {
  let window = text.slice(Math.max(previousEnd, result.index - LOOK_BEHIND), result.index);
  window = window.slice(window.lastIndexOf('\n') + 1);
  const start = lastMatchIndex(START_WORDS, window);
  const due = lastMatchIndex(DUE_WORDS, window);
  if (start >= 0 || due >= 0) return start > due ? 'start' : 'due';
  return DUE_AFTER.test(text.slice(result.index + result.text.length)) ? 'due' : null;
}

const isBefore = (a: WallDate, b: WallDate): boolean =>
  a.year !== b.year ? a.year < b.year : a.month !== b.month ? a.month < b.month : a.day < b.day;

/** The mentioned date; a day and month without a year that already passed this year mean next year's. */
function dateOf(components: chrono.ParsedComponents, today: WallDate): WallDate {
  const date = {
    year: components.get('year')!,
    month: components.get('month')!,
    day: components.get('day')!,
  };
  const yearImplied =
    components.isCertain('month') && components.isCertain('day') && !components.isCertain('year');
  return yearImplied && isBefore(date, today) ? { ...date, year: date.year + 1 } : date;
}

function mentionOf(
  components: chrono.ParsedComponents,
  dayFirst: chrono.ParsedComponents | undefined,
  result: chrono.ParsedResult,
  context: ParseContext,
): Mention {
  const today = wallTimeAt(context.now, context.timezone);
  const readings = new Map<Reading, WallDate>([['default', dateOf(components, today)]]);
  const weekdayOnly =
    components.isCertain('weekday') && !components.isCertain('day') && !WEEKDAY_QUALIFIER.test(result.text);
  if (weekdayOnly) {
    // A bare weekday is its next occurrence (today included) or the one a week later.
    const ahead = (components.get('weekday')! - weekdayOf(today) + 7) % 7;
    readings.set('default', addDays(today, ahead));
    readings.set('followingWeek', addDays(today, ahead + 7));
  } else if (result.tags().has(END_OF_MONTH_TAG)) {
    const lastDay = readings.get('default')!;
    const back = [2, 0, 0, 0, 0, 0, 1][weekdayOf(lastDay)]; // Sunday, Saturday → Friday
    if (back > 0) readings.set('lastWorkingDay', addDays(lastDay, -back));
    readings.set('nextMonthEnd', endOfMonth(lastDay, 1));
  } else if (
    dayFirst &&
    result.tags().has(SLASH_DATE_TAG) &&
    !sameDate(dateOf(dayFirst, today), readings.get('default')!)
  ) {
    readings.set('dayFirst', dateOf(dayFirst, today));
  }
  const time = components.isCertain('hour')
    ? { hour: components.get('hour')!, minute: components.get('minute') ?? 0 }
    : null;
  return { readings, time, weekdayOnly };
}

/** The results that do not overlap any of `taken`. */
function withoutOverlap(results: chrono.ParsedResult[], taken: chrono.ParsedResult[]): chrono.ParsedResult[] {
  return results.filter(
    (r) => !taken.some((t) => r.index < t.index + t.text.length && t.index < r.index + r.text.length),
  );
}

/** chrono's own forwardDate is not used: it misplaces dates in zones east of the server's (see dateOf). */
function parseAll(text: string, reference: chrono.ParsingReference): chrono.ParsedResult[] {
  const english = chrono.en.casual.parse(text, reference);
  if (!CJK.test(text)) return english;
  const chinese = chrono.zh.hans.casual.parse(text, reference);
  return [...chinese, ...withoutOverlap(english, chinese)].sort((a, b) => a.index - b.index);
}

function wallTimeOf(mention: Mention, reading: Reading, slot: Slot): WallTime {
  const date = mention.readings.get(reading) ?? mention.readings.get('default')!;
  return { ...date, ...(mention.time ?? DEFAULT_TIME[slot]) };
}

/**
 * Start and due time found in `text`, read in the caller's time zone: 1 to 3 options when the text names a
 * date (several when it is ambiguous: `3/4`, a bare weekday, "end of the month"), null when it names none.
 * A date without a time means the start (00:00) or the end (23:59) of that day.
 */
export function extractTimeOptions(text: string, context: ParseContext): TimeOption[] | null {
  const reference = { instant: context.now, timezone: offsetMinutesAt(context.now, context.timezone) };
  const results = parseAll(text, reference);
  if (results.length === 0) return null;
  const dayFirst = new Map(chrono.en.GB.parse(text, reference).map((r) => [r.index, r]));

  const slots: Partial<Record<Slot, Mention>> = {};
  const unplaced: Mention[] = [];
  let previousEnd = 0;
  for (const result of results) {
    const alternative = dayFirst.get(result.index);
    const start = mentionOf(result.start, alternative?.start, result, context);
    if (result.end) {
      slots.start ??= start;
      slots.due ??= mentionOf(result.end, alternative?.end, result, context);
    } else {
      const slot = slotOf(text, result, previousEnd);
      if (slot) slots[slot] ??= start;
      else unplaced.push(start);
    }
    previousEnd = result.index + result.text.length;
  }
  // A date with no word saying what it is: a task text names its deadline first.
  slots.due ??= unplaced.shift();
  slots.start ??= slots.due ? undefined : unplaced.shift();

  const readings: Reading[] = ['default'];
  for (const mention of [slots.due, slots.start]) {
    for (const reading of mention?.readings.keys() ?? [])
      if (!readings.includes(reading)) readings.push(reading);
  }
  const options: TimeOption[] = [];
  for (const reading of readings) {
    const option = optionFor(slots, reading, context.timezone);
    if (!options.some((o) => o.startAt === option.startAt && o.dueAt === option.dueAt)) options.push(option);
    if (options.length === MAX_TIME_OPTIONS) break;
  }
  return options;
}

function optionFor(slots: Partial<Record<Slot, Mention>>, reading: Reading, timezone: string): TimeOption {
  const startWall = slots.start ? wallTimeOf(slots.start, reading, 'start') : null;
  let dueWall = slots.due ? wallTimeOf(slots.due, reading, 'due') : null;
  let start = startWall ? instantOf(startWall, timezone) : null;
  let due = dueWall ? instantOf(dueWall, timezone) : null;
  if (start && due && dueWall && due < start && slots.due!.weekdayOnly) {
    // "starts Monday, due Friday" said on a Wednesday: the Friday after that Monday.
    dueWall = { ...dueWall, ...addDays(dueWall, 7) };
    due = instantOf(dueWall, timezone);
  }
  if (start && due && due < start) start = null;
  return { startAt: start?.toISOString() ?? null, dueAt: due?.toISOString() ?? null };
}
