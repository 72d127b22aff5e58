import { ParseContext, ParseInput, ParseResult } from '../ai-provider';
import { deriveTitle, detectLateSubmission, toMarkdown } from './text-shaping';
import { extractTimeOptions } from './time-extraction';

/** What `LocalAiProvider` posts to a worker thread; `context.now` arrives as a Date (structured clone). */
export interface LocalParseTask {
  input: ParseInput;
  context: ParseContext;
}

/** The first answer `read` finds, trying the sources in order. */
function firstFound<T>(sources: string[], read: (source: string) => T | null): T | null {
  for (const source of sources) {
    const found = read(source);
    if (found !== null) return found;
  }
  return null;
}

/**
 * The local parser, synchronous and CPU-bound: dates come from chrono-node, read in the caller's time zone;
 * title, late-submission rule and Markdown from simple rules on the text. Attachments are consulted for dates
 * and the late rule only when the text itself says nothing about them. Piscina calls it in a worker thread,
 * once per task.
 */
export default function parseLocally({ input, context }: LocalParseTask): ParseResult {
  const sources = [input.text, ...input.attachments.map((attachment) => attachment.text)];
  const { title, line } = deriveTitle(input.text);
  return {
    title,
    timeOptions: firstFound(sources, (source) => extractTimeOptions(source, context)) ?? [
      { startAt: null, dueAt: null },
    ],
    allowLateSubmission: firstFound(sources, detectLateSubmission),
    description: toMarkdown(input.text, line),
  };
}
