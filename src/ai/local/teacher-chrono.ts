import * as chrono from 'chrono-node';

/**
 * chrono-node taught how teachers write deadlines: custom parsers for phrases it does not know, and refiners
 * that correct or complete its results. What a tag means is read by `time-extraction.ts`.
 */
export const TAG = {
  /** "Tuesday week", "a week from Friday": the named day's next occurrence, a week later. */
  weekLater: 'classroom/weekLater',
  /** Prefix of a tag counting days from the date: "the day before the test on Friday" (-1), "two days after". */
  dayOffset: 'classroom/dayOffset:',
  /** "first thing Monday": the start of the school day, when no time is written. */
  firstThing: 'classroom/firstThing',
  /** "end of the week": Friday, or else Sunday. */
  endOfWeek: 'classroom/endOfWeek',
  /** "the 15th": this month's, or next month's once passed. */
  dayOfMonth: 'classroom/dayOfMonth',
  /** "moved from Monday to Thursday": only the second date counts. */
  movedTo: 'classroom/movedTo',
  /** Prefix of a tag naming the IANA zone of a time written with a zone abbreviation ("5pm ET"). */
  zone: 'classroom/zone:',
} as const;

const WORD_NUMBERS: Record<string, number> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
};
const NUMBER_WORD = Object.keys(WORD_NUMBERS).join('|');
const HOUR = `(\\d{1,2}|${Object.keys(WORD_NUMBERS).join('|')})`;
const numberOf = (word: string): number => WORD_NUMBERS[word.toLowerCase()] ?? Number(word);
/** Minutes as said before "past" or "to": a number, in digits or words ("ten", "twenty-five"), or a quarter. */
const MINUTES = `(quarter|\\d{1,2}|twenty[-\\s]five|twenty|fifteen|${Object.keys(WORD_NUMBERS).join('|')})`;
function minutesOf(word: string): number {
  const lower = word.toLowerCase().replace(/\s+/g, '-');
  if (lower === 'quarter') return 15;
  if (lower === 'twenty-five') return 25;
  if (lower === 'twenty') return 20;
  if (lower === 'fifteen') return 15;
  return numberOf(lower);
}

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const WEEKDAY = '(sun|mon|tue|tues|wed|thu|thur|thurs|fri|sat)(?:day|nesday|sday|urday)?\\.?';
const weekdayNumber = (word: string): number =>
  WEEKDAYS.findIndex((day) => day.startsWith(word.toLowerCase().slice(0, 3)));

/**
 * Zone abbreviations teachers write after a time, as the clocks of a place show them: "CET" in summer means
 * the time in Berlin, not UTC+1.
 */
const ZONES: Record<string, string> = {
  ET: 'America/New_York',
  EST: 'America/New_York',
  EDT: 'America/New_York',
  CT: 'America/Chicago',
  CDT: 'America/Chicago',
  MT: 'America/Denver',
  MST: 'America/Denver',
  MDT: 'America/Denver',
  PT: 'America/Los_Angeles',
  PST: 'America/Los_Angeles',
  PDT: 'America/Los_Angeles',
  GMT: 'UTC',
  UTC: 'UTC',
  BST: 'Europe/London',
  CET: 'Europe/Berlin',
  CEST: 'Europe/Berlin',
  IST: 'Asia/Kolkata',
  AEST: 'Australia/Sydney',
  AEDT: 'Australia/Sydney',
  NZST: 'Pacific/Auckland',
  NZDT: 'Pacific/Auckland',
  JST: 'Asia/Tokyo',
  SGT: 'Asia/Singapore',
};
/** North America's zones as said by name: "7 pm Pacific", "10am Eastern time". */
const REGION_ZONES: Record<string, string> = {
  pacific: 'America/Los_Angeles',
  mountain: 'America/Denver',
  central: 'America/Chicago',
  eastern: 'America/New_York',
};
const REGION_AFTER = new RegExp(
  `^\\s*(${Object.keys(REGION_ZONES).join('|')})(?:\\s+(?:standard\\s+|daylight\\s+)?time)?\\b`,
  'i',
);
/** "5pm Sydney time", "9am London time": a place whose name is the last part of an IANA zone's. */
const PLACE_TIME_AFTER = /^\s*,?\s*(\p{Lu}[\p{L}]+(?:[ _-]\p{Lu}[\p{L}]+)*)\s+time\b/u;
const ZONES_BY_PLACE = new Map(
  Intl.supportedValuesOf('timeZone').map((zone) => [zone.split('/').at(-1)!.toLowerCase(), zone] as const),
);

/** A zone named after a time by its region or its place, with the text that names it. */
function namedZoneAfter(after: string): { zone: string; text: string } | null {
  const region = REGION_AFTER.exec(after);
  if (region) return { zone: REGION_ZONES[region[1].toLowerCase()], text: region[0] };
  const place = PLACE_TIME_AFTER.exec(after);
  const zone = place && ZONES_BY_PLACE.get(place[1].replace(/[ -]/g, '_').toLowerCase());
  return zone ? { zone, text: place[0] } : null;
}

const ZONE_AFTER = new RegExp(`^\\s*\\(?(${Object.keys(ZONES).join('|')})\\)?(?![A-Za-z])`);
const ZONE_INSIDE = new RegExp(`\\b(${Object.keys(ZONES).join('|')})\\b`);

type Components = Partial<Record<chrono.Component, number>>;

function parser(
  pattern: RegExp,
  extract: (match: RegExpMatchArray, context: chrono.ParsingContext) => Components | null,
  tag?: string,
): chrono.Parser {
  return {
    pattern: () => pattern,
    extract: (context, match) => {
      const components = extract(match, context);
      if (!components) return null;
      const result = context.createParsingComponents(components);
      return tag ? result.addTag(tag) : result;
    },
  };
}

/** The reference date as the caller's clocks show it (chrono keeps it shifted into the given offset). */
function today(context: chrono.ParsingContext): {
  year: number;
  month: number;
  day: number;
  weekday: number;
} {
  const components = context.createParsingComponents();
  return {
    year: components.get('year')!,
    month: components.get('month')!,
    day: components.get('day')!,
    weekday: new Date(
      Date.UTC(components.get('year')!, components.get('month')! - 1, components.get('day')!),
    ).getUTCDay(),
  };
}

function daysFromToday(context: chrono.ParsingContext, days: number): Components {
  const { year, month, day } = today(context);
  const date = new Date(Date.UTC(year, month - 1, day + days));
  return { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
}

const CUSTOM_PARSERS: chrono.Parser[] = [
  // "quarter past four", "half past three", "quarter to five", "10 past 2", "twenty to nine"
  parser(new RegExp(`\\b(?:(half)|${MINUTES})(?:\\s+minutes?)?\\s+(past|to)\\s+${HOUR}\\b`, 'i'), (match) => {
    const hour = numberOf(match[4]);
    const minutes = match[1] ? 30 : minutesOf(match[2]);
    if (hour < 1 || hour > 12 || minutes < 1 || minutes > 59) return null;
    if (match[3].toLowerCase() === 'past') return { hour, minute: minutes };
    return match[1] ? null : { hour: hour === 1 ? 12 : hour - 1, minute: 60 - minutes };
  }),
  // "half six": British for half past six (not "half term", "half an hour")
  parser(new RegExp(`\\bhalf\\s+${HOUR}\\b(?!\\s*(?::|\\.\\d|%|/))`, 'i'), (match) => {
    const hour = numberOf(match[1]);
    return hour >= 1 && hour <= 12 ? { hour, minute: 30 } : null;
  }),
  // "14h00", "9h30": a 24-hour time written with an h
  parser(/\b([01]?\d|2[0-3])h([0-5]\d)\b/i, (match) => {
    const hour = Number(match[1]);
    return { hour, minute: Number(match[2]), meridiem: hour >= 12 ? 1 : 0 };
  }),
  // "by 6", "at 9", "@ 5": a bare hour right after a word that introduces a time
  parser(
    /\b(?:by|at|before|until|till|@)\s*(\d{1,2})(?![\d:.h]|\s*(?:am|pm|a\.m|p\.m|o'?clock|%|st\b|nd\b|rd\b|th\b|\/|-|–|(?:minutes?\s+)?(?:past|to)\b))/i,
    (match) => {
      const hour = Number(match[1]);
      return hour >= 1 && hour <= 12 ? { hour, minute: 0 } : null;
    },
  ),
  // "Monday 1300": a four-digit 24-hour time right after a day
  parser(
    new RegExp(
      `\\b(${WEEKDAY}|tomorrow|today)\\s+(?:at\\s+|@\\s*)?([01]\\d|2[0-3])([0-5]\\d)(?:\\s*h(?:rs?|ours)?)?\\b`,
      'i',
    ),
    (match, context) => {
      const day = match[1].toLowerCase();
      const date =
        day === 'today'
          ? daysFromToday(context, 0)
          : day === 'tomorrow'
            ? daysFromToday(context, 1)
            : { weekday: weekdayNumber(match[2]) };
      return { ...date, hour: Number(match[3]), minute: Number(match[4]) };
    },
  ),
  // "the 15th": a day of this month
  parser(
    // Not an ordinal that qualifies the word after it ("the 2nd draft", "the 4th worksheet"): a date is
    // followed by punctuation, the end, a time or a linking word.
    /\bthe\s+(\d{1,2})(?:st|nd|rd|th)\b(?!\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))(?!\s+(?!(?:at|by|before|after|until|till|of|and|or|to|in|on|for|from|is|was|will|@)\b)[a-z])/i,
    (match) => {
      const day = Number(match[1]);
      return day >= 1 && day <= 31 ? { day } : null;
    },
    TAG.dayOfMonth,
  ),
  // "in a fortnight", "in two fortnights"
  parser(/\bin\s+(a|one|two|2)\s+fortnights?\b/i, (match, context) =>
    daysFromToday(context, /^(two|2)$/i.test(match[1]) ? 28 : 14),
  ),
  // "the day after tomorrow"
  parser(/\b(?:the\s+)?day\s+after\s+tomorrow\b/i, (_match, context) => daysFromToday(context, 2)),
  // "end of the week", "end of this week", "by the end of next week"
  parser(
    /\b(?:the\s+)?end\s+of\s+(?:the\s+|this\s+|(next)\s+)?week\b/i,
    (match, context) => {
      const ahead = (5 - today(context).weekday + 7) % 7;
      return daysFromToday(context, ahead + (match[1] ? 7 : 0));
    },
    TAG.endOfWeek,
  ),
  // "3 weeks from today", "two days from tomorrow"
  parser(
    new RegExp(
      `\\b(\\d{1,2}|a|${Object.keys(WORD_NUMBERS).join('|')})\\s+(day|week)s?\\s+from\\s+(today|tomorrow)\\b`,
      'i',
    ),
    (match, context) => {
      const count = /^an?$/i.test(match[1]) ? 1 : numberOf(match[1]);
      const days =
        count * (match[2].toLowerCase() === 'week' ? 7 : 1) + (match[3].toLowerCase() === 'tomorrow' ? 1 : 0);
      return daysFromToday(context, days);
    },
  ),
  // "3.4." (day.month., as written in much of Europe)
  parser(/\b(\d{1,2})\.(\d{1,2})\.(?!\d)/, (match) => {
    const day = Number(match[1]);
    const month = Number(match[2]);
    return day >= 1 && day <= 31 && month >= 1 && month <= 12 ? { day, month } : null;
  }),
];

const isDated = (components: chrono.ParsingComponents): boolean =>
  components.isCertain('day') || components.isCertain('weekday') || components.isCertain('month');
const isTimed = (components: chrono.ParsingComponents): boolean => components.isCertain('hour');
const end = (result: chrono.ParsingResult): number => result.index + result.text.length;

/** Words that may stand between a date and its time ("Oct 3 by 2pm", "Thursday @ 10:15", "Friday arvo 3pm"). */
const DATE_TIME_GAP =
  /^\s*(?:,|at|by|@|before|until|till|on|from|-|—|–|in the|the|this|arvo|morning|afternoon|evening|night)?\s*(?:,|at|by|@|before|on)?\s*$/i;

/**
 * Neighbouring single results that `join` makes one (it answers the joined result, or null to keep both);
 * a joined result may join the next one too.
 */
function joinNeighbours(
  results: chrono.ParsingResult[],
  join: (previous: chrono.ParsingResult, next: chrono.ParsingResult) => chrono.ParsingResult | null,
): chrono.ParsingResult[] {
  const joined: chrono.ParsingResult[] = [];
  for (const result of results) {
    const previous = joined.at(-1);
    const both = previous && !previous.end && !result.end ? join(previous, result) : null;
    if (both) joined[joined.length - 1] = both;
    else joined.push(result);
  }
  return joined;
}

const isDateOnly = (components: chrono.ParsingComponents): boolean =>
  isDated(components) && !isTimed(components);
const isTimeOnly = (components: chrono.ParsingComponents): boolean =>
  isTimed(components) && !isDated(components);

/** A date result followed or preceded by a time-only result across a connecting word: one result. */
function mergeDateAndTime(
  context: chrono.ParsingContext,
  results: chrono.ParsingResult[],
): chrono.ParsingResult[] {
  return joinNeighbours(results, (previous, next) => {
    if (!DATE_TIME_GAP.test(context.text.slice(end(previous), next.index))) return null;
    const [date, time] =
      isDateOnly(previous.start) && isTimeOnly(next.start)
        ? [previous, next]
        : isDateOnly(next.start) && isTimeOnly(previous.start)
          ? [next, previous]
          : [null, null];
    if (!date || !time) return null;
    for (const component of ['hour', 'minute', 'second', 'meridiem', 'timezoneOffset'] as const) {
      if (time.start.isCertain(component)) date.start.assign(component, time.start.get(component)!);
    }
    date.start.addTags(time.start.tags());
    date.text = context.text.slice(previous.index, end(next));
    date.index = previous.index;
    return date;
  });
}

/** "between Monday and Wednesday": one range, like "from Monday to Wednesday". */
function mergeBetween(
  context: chrono.ParsingContext,
  results: chrono.ParsingResult[],
): chrono.ParsingResult[] {
  return joinNeighbours(results, (previous, next) => {
    if (
      !/\bbetween\s*$/i.test(context.text.slice(Math.max(0, previous.index - 10), previous.index)) ||
      !/^\s*(?:and|&)\s*$/i.test(context.text.slice(end(previous), next.index))
    ) {
      return null;
    }
    previous.end = next.start;
    previous.text = context.text.slice(previous.index, end(next));
    return previous;
  });
}

/** A number or number range read as a time ("sections 4–6", "questions 12-15") is not one. */
const TIME_WORDS =
  /[:.]\d|am\b|pm\b|a\.m|p\.m|noon|midnight|o'?clock|past|quarter|half|\b(?:by|at|before|until|till|@)\s*\d/i;

function dropNumbersThatAreNotTimes(results: chrono.ParsingResult[]): chrono.ParsingResult[] {
  return results.filter((result) => isDated(result.start) || TIME_WORDS.test(result.text));
}

/**
 * An hour without am/pm as a teacher means it: 1 to 6 is the afternoon ("by 5"), 7 to 11 the morning;
 * "11:59" is a minute before midnight.
 */
function schoolHours(components: chrono.ParsingComponents | undefined): void {
  if (!components || !components.isCertain('hour') || components.isCertain('meridiem')) return;
  const hour = components.get('hour')!;
  const minute = components.get('minute') ?? 0;
  if ((hour >= 1 && hour <= 6) || (hour === 11 && minute === 59)) components.assign('hour', hour + 12);
}

/** "midnight" ends the day it names ("Saturday at midnight", "midnight tonight"): its 23:59. */
function midnightEndsTheDay(context: chrono.ParsingContext, result: chrono.ParsingResult): void {
  if (!/midnight/i.test(result.text)) return;
  const components = result.end ?? result.start;
  if (!isDated(components) && !/tonight|today/i.test(result.text)) {
    const { year, month, day } = today(context);
    components.imply('year', year).imply('month', month).imply('day', day);
  } else if (/tonight/i.test(result.text)) {
    const { year, month, day } = today(context);
    components.assign('year', year).assign('month', month).assign('day', day);
  }
  components.assign('hour', 23).assign('minute', 59).assign('meridiem', 1);
}

/** "31 Jan, 12 noon": the 12 is the hour, not the year 2012. */
function noonIsNotAYear(context: chrono.ParsingContext, result: chrono.ParsingResult): void {
  if (!/,\s*12\s+noon/i.test(result.text) || result.start.get('year') !== 2012) return;
  result.start.delete('year');
  result.start.imply('year', today(context).year);
}

/** "Jan 30" is the 30th of January, not January 2030 (chrono's day-first English reads a year there). */
function monthDayIsNotMonthYear(context: chrono.ParsingContext, result: chrono.ParsingResult): void {
  const monthDay = /^[a-z]{3,9}\.?\s+(\d{1,2})$/i.exec(result.text.trim().split(/\s+/).slice(-2).join(' '));
  if (
    !monthDay ||
    result.start.isCertain('day') ||
    !result.start.isCertain('year') ||
    Number(monthDay[1]) > 31
  )
    return;
  result.start.assign('day', Number(monthDay[1]));
  result.start.delete('year');
  result.start.imply('year', today(context).year);
}

/** `result` widened to start at `index`: a phrase before it belongs to it. */
function widen(context: chrono.ParsingContext, result: chrono.ParsingResult, index: number): void {
  result.text = context.text.slice(index, end(result));
  result.index = index;
}

/** Words around a date that move it, and a zone written after its time. */
function readSurroundings(context: chrono.ParsingContext, result: chrono.ParsingResult): void {
  const from = Math.max(0, result.index - 40);
  const before = context.text.slice(from, result.index);
  const after = context.text.slice(end(result));
  const weekAfter = /^\s+week\b/i.exec(after);
  const weekFrom = /\b(?:a|one)\s+week\s+from\s+$/i.exec(before);
  // "the day before the test on Friday", "two days after the trip on the 14th": counted from that date.
  const dayOffset = new RegExp(
    `\\b(?:the\\s+day|(a|${NUMBER_WORD}|\\d{1,2})\\s+days?)\\s+(before|after)\\s+(?:the\\s+[\\p{L}\\s]{1,30}?\\s+(?:on\\s+)?)?$`,
    'iu',
  ).exec(before);
  if (result.start.isCertain('weekday') && !result.start.isCertain('day') && weekAfter) {
    result.start.addTag(TAG.weekLater);
    result.text += weekAfter[0];
  } else if (weekFrom) {
    result.start.addTag(TAG.weekLater);
    widen(context, result, from + weekFrom.index);
  }
  if (dayOffset) {
    const days = dayOffset[1] ? (/^an?$/i.test(dayOffset[1]) ? 1 : numberOf(dayOffset[1])) : 1;
    result.start.addTag(`${TAG.dayOffset}${dayOffset[2].toLowerCase() === 'before' ? -days : days}`);
    widen(context, result, from + dayOffset.index);
  }
  // "first thing Monday", "Monday first thing": the start of the school day.
  const firstThingBefore = /\bfirst\s+thing\s+(?:on\s+|in\s+the\s+morning\s+)?$/i.exec(before);
  if (firstThingBefore || /^\s*(?:,\s*)?first\s+thing\b/i.test(after)) {
    result.start.addTag(TAG.firstThing);
    if (firstThingBefore) widen(context, result, from + firstThingBefore.index);
  }
  if (result.end && /\b(?:moved|postponed|rescheduled|changed|pushed)\b[^.\n]{0,20}$/i.test(before))
    result.start.addTag(TAG.movedTo);
  const zone = ZONE_AFTER.exec(after) ?? ZONE_INSIDE.exec(result.text);
  if (zone && result.start.isCertain('hour')) {
    if (zone.index === 0 && !ZONE_INSIDE.test(result.text)) result.text += zone[0];
    result.start.addTag(`${TAG.zone}${ZONES[zone[1]]}`);
  } else if (result.start.isCertain('hour')) {
    const named = namedZoneAfter(after);
    if (named) {
      result.text += named.text;
      result.start.addTag(`${TAG.zone}${named.zone}`);
    }
  }
}

/**
 * A "range" whose dash opens the next line ("November\n- 4 Nov") is a heading and a bullet: the bullet's date
 * alone is meant.
 */
function noRangeAcrossLines(result: chrono.ParsingResult): void {
  if (!result.end || !result.text.includes('\n')) return;
  const cut = result.text.lastIndexOf('\n') + 1;
  const rest = result.text.slice(cut);
  const marker = /^[\s\-*•–—]*/.exec(rest)![0].length;
  result.start = result.end;
  result.end = undefined;
  result.index += cut + marker;
  result.text = rest.slice(marker);
}

/** A weekday's short form alone: "Sun", "wed", "Sat" (not "Sunday", "Wed."). */
const SHORT_WEEKDAY = /^(?:sun|mon|tues?|wed|thu|thur|thurs|fri|sat)$/i;
/** A title before a name: "Mrs Sun", "Mr. Wed". */
const HONORIFIC_BEFORE = /\b(?:mr|mrs|ms|miss|mx|dr|prof)\.?\s+$/i;
/** What only a word that is no weekday takes after it: a possessive, an article or a possessive pronoun. */
const NOUN_OR_VERB_AFTER = /^(?:['’]s\b|\s+(?:the|a|an|my|your|our|his|her|their|its)\b)/i;
/** Words after which even a lower-case short form is a weekday: "due fri", "by wed", "on sat". */
const WEEKDAY_INTRO_BEFORE = /\b(?:on|by|due|before|until|till|from|this|next|every|until)\s+$/i;

/**
 * A weekday's short form that is some other word: a name after a title ("Mrs Sun"), a possessive or a
 * verb ("Sun's out", "Sat the paper"), or a lower-case word that nothing introduces as a day ("sun cream").
 */
function isOtherWordThanWeekday(context: chrono.ParsingContext, result: chrono.ParsingResult): boolean {
  if (!result.start.isCertain('weekday') || result.start.isCertain('day')) return false;
  const word = /\p{L}+/u.exec(result.text);
  if (!word || !SHORT_WEEKDAY.test(word[0]) || result.text.trim() !== word[0]) return false;
  const before = context.text.slice(Math.max(0, result.index - 12), result.index);
  const after = context.text.slice(end(result), end(result) + 8);
  if (HONORIFIC_BEFORE.test(before) || NOUN_OR_VERB_AFTER.test(after)) return true;
  return word[0] === word[0].toLowerCase() && !WEEKDAY_INTRO_BEFORE.test(before) && !/^\s*\d/.test(after);
}

/** A phrase taken into a widened result ("the day before") is no date of its own. */
function withoutSwallowed(results: chrono.ParsingResult[]): chrono.ParsingResult[] {
  const byStart = [...results].sort((a, b) => a.index - b.index || end(b) - end(a));
  const kept: chrono.ParsingResult[] = [];
  let reach = -1;
  for (const result of byStart) {
    if (end(result) > reach || result.index > reach) kept.push(result);
    reach = Math.max(reach, end(result));
  }
  return kept;
}

const CLASSROOM_REFINER: chrono.Refiner = {
  refine: (context, results) => {
    const refined = dropNumbersThatAreNotTimes(
      mergeBetween(
        context,
        mergeDateAndTime(
          context,
          results.filter((result) => !isOtherWordThanWeekday(context, result)),
        ),
      ),
    );
    for (const result of refined) {
      noRangeAcrossLines(result);
      noonIsNotAYear(context, result);
      monthDayIsNotMonthYear(context, result);
      schoolHours(result.start);
      schoolHours(result.end);
      midnightEndsTheDay(context, result);
      readSurroundings(context, result);
    }
    return withoutSwallowed(refined);
  },
};

function teach(base: chrono.Chrono): chrono.Chrono {
  const taught = base.clone();
  taught.parsers.push(...CUSTOM_PARSERS);
  taught.refiners.push(CLASSROOM_REFINER);
  return taught;
}

/** English, month first ("3/4" is March 4) and day first ("3/4" is 3 April). */
export const monthFirst = teach(chrono.en.casual);
export const dayFirst = teach(chrono.en.GB);
