/** One reading of the start and due time of a task (ISO timestamps or null). */
export interface TimeOption {
  startAt: string | null;
  dueAt: string | null;
}

/** Suggested task fields (the ParseResult of OpenAPI). Every field null means the model failed. */
export interface ParseResult {
  title: string | null;
  /** 1 to 3 options, the most likely first; null only on failure. */
  timeOptions: TimeOption[] | null;
  allowLateSubmission: boolean | null;
  description: string | null;
}

/** What is parsed: the free text, plus the text of a draft's text-like attachments. */
export interface ParseInput {
  text: string;
  attachments: { name: string; text: string }[];
}

/** Relative dates ("Friday", "tomorrow") are read in `timezone` as of `now`. */
export interface ParseContext {
  timezone: string;
  now: Date;
}

export const FAILED_PARSE: ParseResult = Object.freeze({
  title: null,
  timeOptions: null,
  allowLateSubmission: null,
  description: null,
});

/** A suggested title is short: it names the task, the description holds the rest. */
export const TITLE_MAX_LENGTH = 80;

/**
 * `title` cut to TITLE_MAX_LENGTH characters when longer: at the last word that fits, an ellipsis after it.
 * Characters are code points, as request validation and the column count them; a cut between the two halves
 * of a surrogate pair would leave half a character.
 */
export function fitTitle(title: string): string {
  const characters = [...title];
  if (characters.length <= TITLE_MAX_LENGTH) return title;
  const kept = characters.slice(0, TITLE_MAX_LENGTH - 1).join('');
  const lastSpace = kept.lastIndexOf(' ');
  // A text without spaces (Chinese, one long word) is cut where it must.
  return `${(lastSpace >= TITLE_MAX_LENGTH / 2 ? kept.slice(0, lastSpace) : kept).trimEnd()}…`;
}

export const DESCRIPTION_MAX_LENGTH = 100_000;
export const MAX_TIME_OPTIONS = 3;

/**
 * Turns free text into suggested task fields. Chosen by `AI_PROVIDER`; a provider may throw on failure,
 * `AiService` turns that into the all-null answer.
 */
export abstract class AiProvider {
  abstract parse(input: ParseInput, context: ParseContext): Promise<ParseResult>;
}
