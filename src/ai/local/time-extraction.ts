import * as chrono from 'chrono-node';
import { offsetMinutesAt } from '../../common/utils/zoned-time';
import { MAX_TIME_OPTIONS, ParseContext, TimeOption } from '../ai-provider';
import { dayFirst, monthFirst, TAG } from './teacher-chrono';
import { CHAT_HEADER } from './text-shaping';
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
type Reading = 'default' | 'otherOrder' | 'otherWeek' | 'lastWorkingDay' | 'nextMonthEnd' | 'weekEnd';

interface Mention {
  readings: Map<Reading, WallDate>;
  /** Hour and minute when the text states them. */
  time: { hour: number; minute: number } | null;
  /** A bare weekday ("Friday"): its date is only implied. */
  weekdayOnly: boolean;
  /** The IANA zone its time is read in: the caller's, or one the text names ("5pm ET"). */
  zone: string;
}

type Slot = 'start' | 'due';

/** The parse's context with the caller's date, looked up once. */
interface ReadingContext extends ParseContext {
  today: WallDate;
}
/** What a date in a text is: a deadline or start (said so, or a date of a task), or neither. */
type Role = Slot | 'taskDate' | 'other';

/** Words before a date that say what it is; the one nearest the date wins. */
const START_WORDS =
  /\b(?:start|starts|starting|begin|begins|beginning|open|opens|opening|available|from|release|released|assigned)\b|开始|发布|起/gi;
const DUE_WORDS =
  /\b(?:due|deadline|by|before|until|till|submit|submitted|submission|close|closes|closing|end|ends|no later than|hand(?:ed)?[-\s]ins?|turn(?:ed)?[-\s]ins?|upload|return|bring)\b|截止|提交|之前|以前|交/gi;
/** Chinese puts "before" after the date: 3月15日前提交. */
const DUE_AFTER = /^\s*(?:之前|以前|前|截止)/;
/** A sentence with a date and one of these is about an event, not a task ("office hours Tuesday 3–4pm"). */
const EVENT_WORDS =
  /\b(?:office hours|assembly|trip|excursion|rehearsal|meeting|meets|celebrations?|holidays?|break|no school|no class(?:es)?|no homework|parade|concert|talk|term|photo|uniform|conferences?|study hall|practi[sc]e|great|well done|good job|weekend|progress reports?|festival|go home|fair|have a|merry|happy|enjoy|see you)\b|假期|放假|表现/i;
/** A sentence with a date and one of these names a task's date ("Spelling test Tuesday week"). */
const TASK_WORDS =
  /\b(?:homework|assignment|essay|report|project|worksheet|lab|quiz|test|exam|midterm|final|presentations?|speech|reading|read|write|submit|complete|finish|draft|portfolio|journal|log|notes|outline|slides|problem set|exercises?|questions?|corrections?|forms?|slips?|money)\b|作业|报告|考试|测验|练习/i;
/** Dates that set no deadline when nothing says so: "great work today", "see you tonight". */
const CASUAL_DAY =
  /^(?:today|tonight|yesterday|now|this (?:morning|afternoon|evening)|morning|night|weekend|this week|今天|昨天|今晚)$/i;
const WEEKDAY_QUALIFIER = /\b(?:this|next|last|coming|following|previous)\b/i;
/** Chinese qualifies a weekday right before it (本周五, 下周一), outside chrono's match. */
const WEEKDAY_QUALIFIER_CJK = /[这本下上]$/;
const CJK = /[\u3400-\u9fff]/;
/** An hour with nothing to tell morning from evening: "by 7", "at 5 o'clock". */
const BARE_HOUR = /^(?:(?:by|at|before|until|till|@)\s*)?\d{1,2}(?:\s*o'?clock)?$/i;
const LOOK_BEHIND = 48;
/** How far from a date its sentence is read for what the date is about. */
const SENTENCE_REACH = 160;
const SENTENCE_END = /[!?。！？\n]|\.(?=\s|$)/g;
const END_OF_MONTH_TAG = 'parser/ENEndOfCurrentMonthParser';
/** Numeric dates like 3/4: the only ones the other day-month order can change. */
const SLASH_DATE_TAG = 'parser/SlashDateFormatParser';
/** Zones whose people write the day first (3/4 is 3 April); elsewhere the month comes first. */
const DAY_FIRST_ZONES =
  /^(?:Europe|Africa|Australia|Indian|Atlantic)\/|^Pacific\/(?:Auckland|Chatham|Fiji)$|^Asia\/(?:Kolkata|Calcutta|Karachi|Dhaka|Singapore|Kuala_Lumpur|Jakarta|Dubai|Riyadh|Jerusalem|Tel_Aviv|Bangkok|Ho_Chi_Minh|Kathmandu|Colombo)$|^America\/(?:Sao_Paulo|Mexico_City|Argentina\/.*|Bogota|Lima|Santiago|Caracas|Montevideo)$/;

/** "first thing Monday": when school days start, as near as one time can say it. */
const START_OF_SCHOOL_DAY = { hour: 9, minute: 0 };

const DEFAULT_TIME: Record<Slot, { hour: number; minute: number }> = {
  start: { hour: 0, minute: 0 },
  due: { hour: 23, minute: 59 },
};

function lastMatchIndex(pattern: RegExp, text: string): number {
  let last = -1;
  for (const match of text.matchAll(pattern)) last = match.index;
  return last;
}

/** Where the sentences of a text start; the first at 0. */
function sentenceStarts(text: string): number[] {
  return [0, ...[...text.matchAll(SENTENCE_END)].map((match) => match.index + 1)];
}

/** The index in `starts` of the sentence that holds `index`. */
function sentenceAt(starts: number[], index: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (starts[middle] <= index) low = middle;
    else high = middle - 1;
  }
  return low;
}

/** Start or due, from the words right before the mention (same line) or inside it ("by 6"), else unknown. */
function slotWords(text: string, result: chrono.ParsedResult, previousEnd: number): Slot | null {
  const before = text.slice(Math.max(previousEnd, result.index - LOOK_BEHIND), result.index);
  // The words of this sentence only, and a "by" that opens the mention itself ("by 6").
  const window =
    before.split(/[.!?。！？\n](?=\s)|\n/).at(-1)! +
    (/^(?:by|before|until|till)\b/i.exec(result.text)?.[0] ?? '');
  // "for Friday" right before the date: what the work is for.
  if (/\bfor\s+(?:the\s+)?$/i.test(window)) return 'due';
  const start = lastMatchIndex(START_WORDS, window);
  const due = lastMatchIndex(DUE_WORDS, window);
  if (start >= 0 || due >= 0) return start > due ? 'start' : 'due';
  return DUE_AFTER.test(text.slice(result.index + result.text.length)) ? 'due' : null;
}

/** What the date is: said to be a deadline or start, the date of a task, or something else (an event). */
function roleOf(
  text: string,
  sentence: string,
  title: string,
  result: chrono.ParsedResult,
  previousEnd: number,
): Role {
  const slot = slotWords(text, result, previousEnd);
  if (slot === 'due') return 'due';
  const before = text.slice(Math.max(0, result.index - 12), result.index);
  const sameDayRange =
    result.end &&
    result.end.isCertain('hour') &&
    !result.end.isCertain('day') &&
    !result.end.isCertain('weekday');
  if (
    EVENT_WORDS.test(sentence) ||
    CASUAL_DAY.test(result.text.trim()) ||
    /\bevery\s+$/i.test(before) ||
    sameDayRange
  ) {
    return 'other';
  }
  if (slot === 'start') return 'start';
  // The words that lead up to the date in its clause name what is on that day ("Pizza party Friday for the
  // reading challenge": a party); only a date that opens its clause is about what the sentence names.
  const lead = clauseBefore(text, result.index).replace(LINKING_WORDS, ' ');
  if (/\p{L}{2}/u.test(lead)) return TASK_WORDS.test(lead) ? 'taskDate' : 'other';
  return TASK_WORDS.test(sentence) || TASK_WORDS.test(title) ? 'taskDate' : 'other';
}

/** Words that only link a date to its clause ("quiz is on Friday"): they name nothing. */
const LINKING_WORDS =
  /\b(?:on|at|by|for|in|this|next|the|a|an|before|after|until|till|from|is|are|was|will|be|it|'s|of)\b/gi;

/** The text of the clause before `index`: back to a punctuation mark, a line break or a linking word. */
function clauseBefore(text: string, index: number): string {
  const before = text.slice(Math.max(0, index - LOOK_BEHIND), index);
  return before.split(/[,;:!?()\n—–]|\.(?=\s)|\s-\s|\b(?:and|but|so|then|or)\b/i).at(-1)!;
}

const isBefore = (a: WallDate, b: WallDate): boolean =>
  a.year !== b.year ? a.year < b.year : a.month !== b.month ? a.month < b.month : a.day < b.day;

/**
 * The mentioned date. A day and month without a year that already passed this year mean next year's; a day
 * of the month alone ("the 15th") that passed means next month's.
 */
function dateOf(components: chrono.ParsedComponents, today: WallDate): WallDate {
  const date = {
    year: components.get('year')!,
    month: components.get('month')!,
    day: components.get('day')!,
  };
  if (components.tags().has(TAG.dayOfMonth)) {
    const thisMonth = { ...today, day: date.day };
    return isBefore(thisMonth, today) ? { ...endOfMonth(today, 1), day: date.day } : thisMonth;
  }
  const yearImplied =
    components.isCertain('month') && components.isCertain('day') && !components.isCertain('year');
  return yearImplied && isBefore(date, today) ? { ...date, year: date.year + 1 } : date;
}

function zoneOf(components: chrono.ParsedComponents, timezone: string): string {
  for (const tag of components.tags()) if (tag.startsWith(TAG.zone)) return tag.slice(TAG.zone.length);
  return timezone;
}

function mentionOf(
  components: chrono.ParsedComponents,
  otherOrder: chrono.ParsedComponents | undefined,
  result: chrono.ParsedResult,
  context: ReadingContext,
  textBefore: string,
): Mention {
  const { today } = context;
  const readings = new Map<Reading, WallDate>([['default', dateOf(components, today)]]);
  const tags = components.tags();
  const weekday = components.isCertain('weekday') && !components.isCertain('day');
  const cjkQualifier = /^(?:周|星期|礼拜)/.test(result.text) ? WEEKDAY_QUALIFIER_CJK.exec(textBefore) : null;
  const weekdayOnly =
    weekday && !WEEKDAY_QUALIFIER.test(result.text) && !cjkQualifier && !tags.has(TAG.weekLater);
  const time = components.isCertain('hour')
    ? { hour: components.get('hour')!, minute: components.get('minute') ?? 0 }
    : null;
  const zone = zoneOf(components, context.timezone);
  if (weekday && (weekdayOnly || tags.has(TAG.weekLater))) {
    // A bare weekday is its next occurrence after today, or the one a week later; today's own weekday is
    // next week's, or else today.
    const ahead = (components.get('weekday')! - weekdayOf(today) + 7) % 7 || 7;
    readings.set('default', addDays(today, ahead + (tags.has(TAG.weekLater) ? 7 : 0)));
    if (weekdayOnly) readings.set('otherWeek', addDays(today, ahead === 7 ? 0 : ahead + 7));
  } else if (weekday && cjkQualifier && '这本'.includes(cjkQualifier[0])) {
    // 本周五: the Friday of this week (weeks start on Monday).
    const mondayBased = (day: number): number => (day + 6) % 7;
    readings.set(
      'default',
      addDays(today, mondayBased(components.get('weekday')!) - mondayBased(weekdayOf(today))),
    );
  } else if (tags.has(TAG.endOfWeek)) {
    const friday = readings.get('default')!;
    readings.set('weekEnd', addDays(friday, 2));
  } else if (result.tags().has(END_OF_MONTH_TAG)) {
    const lastDay = readings.get('default')!;
    const back = [2, 0, 0, 0, 0, 0, 1][weekdayOf(lastDay)]; // Sunday, Saturday → Friday
    if (back > 0) readings.set('lastWorkingDay', addDays(lastDay, -back));
    readings.set('nextMonthEnd', endOfMonth(lastDay, 1));
  } else if (
    otherOrder &&
    result.tags().has(SLASH_DATE_TAG) &&
    !sameDate(dateOf(otherOrder, today), readings.get('default')!)
  ) {
    readings.set('otherOrder', dateOf(otherOrder, today));
  } else if (time && !components.isCertain('day') && !weekday && !components.isCertain('month')) {
    // A time alone ("due 9am") is the next such time: today's, or tomorrow's once it passed. A bare hour
    // ("by 7") is the next time the clock shows it, morning or evening.
    const hours = BARE_HOUR.test(result.text.trim()) ? [time.hour % 12, (time.hour % 12) + 12] : [time.hour];
    const next = [0, 1]
      .flatMap((days) => hours.map((hour) => ({ ...addDays(today, days), hour, minute: time.minute })))
      .find((wall) => instantOf(wall, zone) > context.now)!;
    readings.set('default', { year: next.year, month: next.month, day: next.day });
    time.hour = next.hour;
  }
  for (const tag of tags) {
    if (!tag.startsWith(TAG.dayOffset)) continue;
    const days = Number(tag.slice(TAG.dayOffset.length));
    for (const [reading, date] of readings) readings.set(reading, addDays(date, days));
  }
  return {
    readings,
    time: time ?? (tags.has(TAG.firstThing) ? START_OF_SCHOOL_DAY : null),
    weekdayOnly,
    zone,
  };
}

/** The results that do not overlap any of `taken`. */
function withoutOverlap(results: chrono.ParsedResult[], taken: chrono.ParsedResult[]): chrono.ParsedResult[] {
  return results.filter(
    (r) => !taken.some((t) => r.index < t.index + t.text.length && t.index < r.index + r.text.length),
  );
}

/** chrono's own forwardDate is not used: it misplaces dates in zones east of the server's (see dateOf). */
function parseAll(
  text: string,
  reference: chrono.ParsingReference,
  english: chrono.Chrono,
): chrono.ParsedResult[] {
  const found = english.parse(text, reference);
  if (!CJK.test(text)) return found;
  const chinese = chrono.zh.hans.casual.parse(text, reference);
  return [...chinese, ...withoutOverlap(found, chinese)].sort((a, b) => a.index - b.index);
}

function wallTimeOf(mention: Mention, reading: Reading, slot: Slot): WallTime {
  const date = mention.readings.get(reading) ?? mention.readings.get('default')!;
  return { ...date, ...(mention.time ?? DEFAULT_TIME[slot]) };
}

/** Where the chat headers of a text's lines are ("[9:05 AM] Ms. Rivera:"): their times were not written as dates. */
function chatHeaders(text: string): [number, number][] {
  const spans: [number, number][] = [];
  let lineStart = 0;
  for (const line of text.split('\n')) {
    const header = CHAT_HEADER.exec(line);
    if (header) spans.push([lineStart, lineStart + header[0].length]);
    lineStart += line.length + 1;
  }
  return spans;
}

/**
 * A month without a day ("November", "in March"): a heading or a season, no date to be due on. "The end of
 * the month" is a day.
 */
const isMonthOnly = (result: chrono.ParsedResult): boolean =>
  !result.end &&
  result.start.isCertain('month') &&
  !result.start.isCertain('day') &&
  !result.start.isCertain('weekday') &&
  !result.start.isCertain('hour') &&
  !result.tags().has(END_OF_MONTH_TAG);

/** The first line with words: a date there or nearby belongs to the task it names. */
const firstLine = (text: string): string => text.split('\n').find((line) => line.trim().length > 0) ?? '';

/**
 * A bare weekday next to a full date of the same weekday in its sentence ("the Monday after break (Nov 30)")
 * is that date.
 */
function pinWeekday(mention: Mention, sameSentence: Mention[]): void {
  if (!mention.weekdayOnly) return;
  const weekday = weekdayOf(mention.readings.get('default')!);
  const date = sameSentence.find(
    (other) =>
      !other.weekdayOnly &&
      other.readings.size === 1 &&
      weekdayOf(other.readings.get('default')!) === weekday,
  );
  if (date) {
    mention.readings = new Map(date.readings);
    mention.weekdayOnly = false;
  }
}

/**
 * Start and due time found in `text`, read in the caller's time zone: 1 to 3 options when the text names a
 * deadline or start (several when it is ambiguous: `3/4`, a bare weekday, "end of the month"), null when it
 * names neither. A date without a time means the start (00:00) or the end (23:59) of that day. A date that
 * is neither said to be a deadline or start nor the date of a task ("great work today", "office hours
 * Tuesday 3–4pm") is no deadline.
 */
export function extractTimeOptions(text: string, context: ParseContext): TimeOption[] | null {
  const reference = { instant: context.now, timezone: offsetMinutesAt(context.now, context.timezone) };
  const [primary, secondary] = DAY_FIRST_ZONES.test(context.timezone)
    ? [dayFirst, monthFirst]
    : [monthFirst, dayFirst];
  const headers = chatHeaders(text);
  const results = parseAll(text, reference, primary).filter(
    (result) =>
      !isMonthOnly(result) && !headers.some(([from, to]) => result.index >= from && result.index < to),
  );
  if (results.length === 0) return null;
  const otherOrder = new Map(secondary.parse(text, reference).map((r) => [r.index, r]));
  const title = firstLine(text);
  const readingContext = { ...context, today: wallTimeAt(context.now, context.timezone) };
  const starts = sentenceStarts(text);
  const slots: Partial<Record<Slot, Mention>> = {};
  const sentenceOf = new Map<Mention, number>();
  const taskDates: Mention[] = [];
  let previousEnd = 0;
  for (const result of results) {
    const alternative = otherOrder.get(result.index);
    const sentenceIndex = sentenceAt(starts, result.index);
    // A run-on "sentence" (a list without full stops) is read only near the date.
    const sentence = text.slice(
      Math.max(starts[sentenceIndex], result.index - SENTENCE_REACH),
      Math.min(starts[sentenceIndex + 1] ?? text.length, result.index + result.text.length + SENTENCE_REACH),
    );
    const role = roleOf(text, sentence, title, result, previousEnd);
    previousEnd = result.index + result.text.length;
    const textBefore = text.slice(Math.max(0, result.index - 4), result.index);
    const mention = (components: chrono.ParsedComponents, other?: chrono.ParsedComponents): Mention => {
      const made = mentionOf(components, other, result, readingContext, textBefore);
      sentenceOf.set(made, sentenceIndex);
      return made;
    };
    if (result.end && result.start.tags().has(TAG.movedTo)) {
      // "moved from Monday to Thursday": Thursday, as if said alone; "from" is no start there.
      const moved = mention(result.end, alternative?.end);
      if (role === 'due') slots.due ??= moved;
      else if (role !== 'other') taskDates.push(moved);
    } else if (result.end && role !== 'other') {
      slots.start ??= mention(result.start, alternative?.start);
      slots.due ??= mention(result.end, alternative?.end);
    } else if (!result.end) {
      const made = mention(result.start, alternative?.start);
      if (role === 'taskDate') taskDates.push(made);
      else if (role !== 'other') slots[role] ??= made;
    }
  }
  // A task's date with no word saying what it is: a task text names its deadline first.
  slots.due ??= taskDates.shift();
  slots.start ??= slots.due ? undefined : taskDates.shift();
  if (!slots.due && !slots.start) return null;
  const mentions = [...sentenceOf.keys()];
  for (const slot of [slots.due, slots.start]) {
    if (slot)
      pinWeekday(
        slot,
        mentions.filter((other) => sentenceOf.get(other) === sentenceOf.get(slot)),
      );
  }
  const readings: Reading[] = ['default'];
  for (const mention of [slots.due, slots.start]) {
    for (const reading of mention?.readings.keys() ?? [])
      if (!readings.includes(reading)) readings.push(reading);
  }
  const options: TimeOption[] = [];
  for (const reading of readings) {
    const option = optionFor(slots, reading);
    if (!options.some((o) => o.startAt === option.startAt && o.dueAt === option.dueAt)) options.push(option);
  }
  // A deadline already past is never the first option while a later reading exists.
  const now = context.now.toISOString();
  const ahead = options.filter((option) => option.dueAt === null || option.dueAt > now);
  return [...ahead, ...options.filter((option) => !ahead.includes(option))].slice(0, MAX_TIME_OPTIONS);
}

function optionFor(slots: Partial<Record<Slot, Mention>>, reading: Reading): TimeOption {
  const startWall = slots.start ? wallTimeOf(slots.start, reading, 'start') : null;
  let dueWall = slots.due ? wallTimeOf(slots.due, reading, 'due') : null;
  let start = startWall ? instantOf(startWall, slots.start!.zone) : null;
  let due = dueWall ? instantOf(dueWall, slots.due!.zone) : null;
  if (start && due && dueWall && due < start && slots.due!.weekdayOnly) {
    // "starts Monday, due Friday" said on a Wednesday: the Friday after that Monday.
    dueWall = { ...dueWall, ...addDays(dueWall, 7) };
    due = instantOf(dueWall, slots.due!.zone);
  }
  if (start && due && due < start) start = null;
  return { startAt: start?.toISOString() ?? null, dueAt: due?.toISOString() ?? null };
}
