import { fitTitle, TITLE_MAX_LENGTH } from '../ai-provider';

/** Markdown markers a first line may carry: heading, quote, list bullet or number. */
const LINE_MARKER = /^\s*(?:#{1,6}\s+|>\s*|[-*+•·・▪●◦]\s+|\d{1,3}[.)、]\s*)/;
const SENTENCE_END = /[.!?。！？](?=\s|$)|[。！？]/;
const BULLET = /^\s*[-*+•·・▪●◦]\s+(.*)$/;
const NUMBERED = /^\s*(?:(\d{1,3})[.)、]|[(（](\d{1,3})[)）])\s*(.*)$/;
/** A short line ending in a colon that introduces what follows ("Requirements:"). */
const LABEL = /^(?!\s*#)(.{1,60}?)\s*[:：]\s*$/;
const BARE_URL = /(^|[\s(])(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])/g;

function firstContentLine(text: string): string | undefined {
  return text
    .split(/\r?\n/)
    .map((line) => line.replace(LINE_MARKER, '').trim())
    .find((line) => line.length > 0);
}

/** The first line, or its first sentence when the line is too long; at most 200 characters. */
export function deriveTitle(text: string): string | null {
  const line = firstContentLine(text);
  if (!line) return null;
  const fitted = fitTitle(line);
  if (fitted === line) return line;
  // Both cuts below stay within 200 characters: they are at most 200 UTF-16 units.
  const sentenceEnd = line.search(SENTENCE_END);
  if (sentenceEnd > 0 && sentenceEnd < TITLE_MAX_LENGTH) return line.slice(0, sentenceEnd + 1);
  const lastSpace = fitted.lastIndexOf(' ');
  return lastSpace > TITLE_MAX_LENGTH / 2 ? `${fitted.slice(0, lastSpace)}…` : fitted;
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
 * The first line is left out when it became the title and more follows. Null when nothing is left.
 */
export function toMarkdown(text: string, title: string | null): string | null {
  let lines = text.replace(/\r\n?/g, '\n').split('\n');
  const first = lines.findIndex((line) => line.trim().length > 0);
  if (first >= 0 && title !== null && lines[first].replace(LINE_MARKER, '').trim() === title) {
    const rest = lines.slice(first + 1);
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
