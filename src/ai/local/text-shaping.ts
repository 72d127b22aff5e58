import { fitTitle } from '../ai-provider';

/** Markdown markers a first line may carry: heading, quote, list bullet or number. */
const LINE_MARKER = /^\s*(?:#{1,6}\s+|>\s*|[-*+•·・▪●◦]\s+|\d{1,3}[.)、]\s*)/;
const BULLET = /^\s*[-*+•·・▪●◦]\s+(.*)$/;
const NUMBERED = /^\s*(?:(\d{1,3})[.)、]|[(（](\d{1,3})[)）])\s*(.*)$/;
/** A short line ending in a colon that introduces what follows ("Requirements:"). */
const LABEL = /^(?!\s*#)(.{1,60}?)\s*[:：]\s*$/;
const BARE_URL = /(^|[\s(])(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])/g;

/** A greeting or salutation opening a message: "Hi class!", "Dear students,", "Kia ora koutou,", "各位同学好！". */
const GREETING =
  /^(?:hi|hello|hey|hiya|dear|greetings|good (?:morning|afternoon|evening|night)|kia ora|talofa|hallo|liebe[rs]?|g'day|howdy|bonjour|hola|namaste|ciao)\b|^(?:各位|同学们|大家好|亲爱的)/i;
/**
 * The header of a chat message copied with the text: a clock time (bracketed, or bare before a speaker) and
 * the speaker, or a speaker and a bracketed time: "[9:05 AM] Ms. Rivera:", "14:20 Mr Patel:",
 * "3:15 PM - Coach Davis:", "Mrs. Okafor (Mar 3, 4:15 PM):". Its time is when it was sent, not a deadline.
 */
export const CHAT_HEADER =
  /^[ \t]*(?:\[[^\]\n]{0,30}\d{1,2}:\d{2}[^\]\n]{0,20}\](?:[ \t]*[-–—]?[ \t]*\p{Lu}[^\n:]{0,40}:)?|\d{1,2}:\d{2}(?:[ \t]*[AaPp]\.?[Mm]\.?)?[ \t]*[-–—]?[ \t]*\p{Lu}[^\n:]{0,40}:|\p{Lu}[^\n:()]{0,40}\([^)\n]{0,30}\d{1,2}:\d{2}[^)\n]{0,20}\)[ \t]*:)[ \t]*/u;

/** Labels before a subject: "Subject:", "Re:", "Reminder —", "Reminder that". */
const SUBJECT_LABEL =
  /^(?:(?:subject|title|re|fwd?|reminder|remember|note|announcement|important|update|attention|homework)\s*[:：—–]|reminder that\b)\s*/i;
/** A deadline label: "Deadline:", "Due:", "Due by 9pm tonight:"; what follows is a date or the subject. */
const DEADLINE_LABEL = /^(?:deadline|due(?: date)?|due\b.{1,30}?)\s*[:：](?:\s+|$)/i;
/** What a deadline label is followed by when the line holds nothing but the date. */
const DATE_START =
  /^(?:\d|(?:mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|today|tonight|tomorrow|next|this|end)/i;
/** A deadline clause after the subject: "English essay: deadline 31 Jan", "Maths homework, due tomorrow". */
const TRAILING_DEADLINE = /\s*[:：—–,-]\s*(?:deadline|due)\b.*$/i;
/**
 * The end of a sentence: a full stop, "!" or "?" before a capital or the end (not "p. 45", "a.m. on",
 * "Mr. Chen"), or a Chinese one anywhere.
 */
const SENTENCE_END = /(?<!\b(?:[A-Za-z]|Mr|Ms|Mrs|Dr|St|No|vs|pp))[.!?]+(?=\s+[^\p{Ll}\d]|\s*$)|[。！？]/u;
const EDGE_DECORATION =
  /^[\p{Extended_Pictographic}\uFE0F\u200D*_`~\s]+|[\p{Extended_Pictographic}\uFE0F\u200D*_`~\s]+$/gu;
const TRAILING_PUNCTUATION = /[\s.!?。！？,;:：]+$/u;

const undecorated = (text: string): string => text.replace(EDGE_DECORATION, '');

/** The line without a greeting sentence at its start, '' when the line is nothing but a greeting. */
function withoutGreeting(line: string): string {
  if (!GREETING.test(line)) return line;
  const end = SENTENCE_END.exec(line);
  if (!end) return /[,，]\s*$/.test(line) || line.length <= 40 ? '' : line;
  return undecorated(line.slice(end.index + end[0].length));
}

/**
 * The subject a line states, '' when it states none (a greeting, a bare deadline line); `whole` when only
 * greetings, labels and decoration were left out, so the line says nothing more than the subject.
 */
function subjectOf(line: string): { subject: string; whole: boolean } {
  let subject = undecorated(
    withoutGreeting(undecorated(line.replace(CHAT_HEADER, '').replace(LINE_MARKER, ''))),
  );
  while (SUBJECT_LABEL.test(subject)) subject = undecorated(subject.replace(SUBJECT_LABEL, ''));
  const deadline = DEADLINE_LABEL.exec(subject);
  if (!deadline) return { subject, whole: true };
  const rest = subject.slice(deadline[0].length);
  return { subject: DATE_START.test(rest) ? '' : rest, whole: false };
}

export interface Title {
  title: string | null;
  /** The line the title took whole, left out of the description; null when the title is part of a line. */
  line: number | null;
}

/**
 * The announcement's subject: the first line that states one (greetings, salutations and labels such as
 * "Subject:" or "Deadline:" skipped), its first sentence, without a trailing deadline clause, at most 80
 * characters cut at a word.
 */
export function deriveTitle(text: string): Title {
  const lines = text.split(/\r?\n/);
  for (const [index, line] of lines.entries()) {
    const { subject, whole } = subjectOf(line);
    if (!subject) continue;
    const end = SENTENCE_END.exec(subject);
    let title = end ? subject.slice(0, end.index + end[0].length) : subject;
    title = undecorated(
      title.replace(TRAILING_DEADLINE, (clause) => (clause.length < title.length ? '' : clause)),
    );
    title = title.replace(TRAILING_PUNCTUATION, '') || title;
    const fitted = fitTitle(title.charAt(0).toUpperCase() + title.slice(1));
    // A title cut short or taken from part of the line leaves the line to the description.
    const tookAll =
      whole &&
      title === subject.replace(TRAILING_PUNCTUATION, '') &&
      [...fitted].length === [...title].length;
    return { title: fitted, line: tookAll ? index : null };
  }
  return { title: null, line: null };
}

type Block = { kind: 'paragraph' | 'heading' | 'item' | 'code'; text: string };

function blockOf(line: string): Block {
  if (/^\s*#{1,6}\s/.test(line)) return { kind: 'heading', text: line.trim() };
  const bullet = BULLET.exec(line);
  if (bullet) return { kind: 'item', text: `- ${bullet[1].trim()}` };
  const numbered = NUMBERED.exec(line);
  if (numbered) return { kind: 'item', text: `${numbered[1] ?? numbered[2]}. ${numbered[3].trim()}` };
  const label = LABEL.exec(line);
  if (label) return { kind: 'heading', text: `### ${label[1].trim()}` };
  return { kind: 'paragraph', text: line.trim().replace(BARE_URL, '$1<$2>') };
}

/**
 * Free text as Markdown: each line its own paragraph (line breaks in free text are meant), bullets and
 * numbered lines as lists, "Label:" lines as headings, bare links as autolinks; fenced code kept as is.
 * The line the title took whole (`titleLine`) is left out when more follows. Null when nothing is left.
 */
export function toMarkdown(text: string, titleLine: number | null): string | null {
  let lines = text.split(/\r?\n/);
  if (titleLine !== null) {
    const rest = lines.filter((_line, index) => index !== titleLine);
    if (rest.some((line) => line.trim().length > 0)) lines = rest;
  }
  const blocks: Block[] = [];
  let fence: string[] | null = null;
  for (const line of lines) {
    if (/^\s*```/.test(line)) {
      if (fence) {
        fence.push(line);
        blocks.push({ kind: 'code', text: fence.join('\n') });
        fence = null;
      } else fence = [line];
    } else if (fence) fence.push(line);
    else if (line.trim().length > 0) blocks.push(blockOf(line));
  }
  if (fence) blocks.push({ kind: 'code', text: [...fence, '```'].join('\n') });
  if (blocks.length === 0) return null;
  // List items stay together; every other block is set apart by a blank line.
  return blocks
    .map((block, i) =>
      i > 0 && !(block.kind === 'item' && blocks[i - 1].kind === 'item') ? `\n${block.text}` : block.text,
    )
    .join('\n');
}

const LATE_FORBIDDEN = [
  /\b(?:no|not|never|without)\b[^.\n!?]{0,30}\blate\s+(?:submissions?|work|turn-?ins?|hand-?ins?|assignments?|homework|papers?|entries)\b/i,
  /\blate\b[^.\n!?]{0,40}\b(?:not|never|won't|will not|cannot|can't)\b[^.\n!?]{0,20}\b(?:accepted|allowed|permitted|taken|graded)\b/i,
  /\blate\b[^.\n!?]{0,30}\b(?:prohibited|forbidden|rejected|refused)\b/i,
  /不(?:接受|允许|能|可以?|予)[^。\n]{0,6}(?:迟交|补交|逾期)|逾期不(?:收|候|接受)|迟交无效|过期不(?:收|候)/,
];
const LATE_ALLOWED = [
  /\blate\b[^.\n!?]{0,30}\b(?:allowed|accepted|permitted|ok|okay|welcome)\b/i,
  /\b(?:accept|accepts|accepting|allow|allows|allowing|permit|permits)\b[^.\n!?]{0,20}\blate\b/i,
  /(?:允许|接受|可以|可)[^。\n]{0,4}(?:迟交|补交|逾期提交)/,
];

/** true / false when the text says late submissions are allowed / refused, null when it says nothing. */
export function detectLateSubmission(text: string): boolean | null {
  if (LATE_FORBIDDEN.some((pattern) => pattern.test(text))) return false;
  if (LATE_ALLOWED.some((pattern) => pattern.test(text))) return true;
  return null;
}
