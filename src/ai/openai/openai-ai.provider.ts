import { Injectable } from '@nestjs/common';
import { type AiConfig } from '../../config/ai.config';
import { InjectConfig } from '../../config/config.module';
import {
  AiProvider,
  MAX_TIME_OPTIONS,
  ParseContext,
  ParseInput,
  ParseResult,
  TITLE_MAX_LENGTH,
} from '../ai-provider';
import { wallTimeAt } from '../local/wall-time';
import { ModelOutputError, readModelOutput } from './model-output';

const INSTRUCTIONS = `You turn a teacher's free-text assignment notice into task fields.
Answer with one JSON object and nothing else, with exactly these keys:
- "title": the announcement's subject (no greeting, salutation or label such as "Deadline:"; at most
  ${TITLE_MAX_LENGTH} characters, cut at a word), or null.
- "timeOptions": an array of 1 to ${MAX_TIME_OPTIONS} objects {"startAt", "dueAt"}, most likely reading first.
  startAt is when the task opens, dueAt its deadline; each an ISO 8601 timestamp with a UTC offset, or null
  when the text does not say. Give several objects only when the text is ambiguous (e.g. "3/4" could be
  March 4 or April 3; "Friday" could be this week's or next week's). When the text sets no deadline (dates
  of events, praise, reminders without a task), give one object with both null. A date without a time means
  00:00 for startAt and 23:59 for dueAt; "midnight" of a day means 23:59 of that day; a time written with a
  zone ("5pm ET") is in that zone; a deadline already past is never the first reading.
- "allowLateSubmission": true or false when the text says whether late submissions are accepted, else null.
- "description": the task body as Markdown (without the title), or null.`;

interface ChatCompletion {
  choices?: { message?: { content?: unknown } }[];
}

/**
 * `AI_PROVIDER=openai`: an OpenAI-compatible chat-completions endpoint in JSON mode. Throws on any failure
 * (network, timeout, status, malformed answer); `AiService` answers those with every field null.
 */
@Injectable()
export class OpenAiProvider extends AiProvider {
  constructor(@InjectConfig() private readonly config: AiConfig) {
    super();
  }

  async parse(input: ParseInput, context: ParseContext): Promise<ParseResult> {
    const { baseUrl, apiKey, model, timeoutMs } = this.config.ai;
    const response = await fetch(`${baseUrl}/chat/completions`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}),
      },
      body: JSON.stringify({
        model,
        response_format: { type: 'json_object' },
        temperature: 0,
        messages: [
          { role: 'system', content: `${INSTRUCTIONS}\n\n${this.clock(context)}` },
          { role: 'user', content: this.userMessage(input) },
        ],
      }),
      redirect: 'error',
      // Covers the whole exchange, reading the body included.
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) throw new ModelOutputError(`chat completions answered ${response.status}`);
    const completion = (await response.json()) as ChatCompletion;
    const content = completion.choices?.[0]?.message?.content;
    if (typeof content !== 'string') throw new ModelOutputError('no message content in the completion');
    let output: unknown;
    try {
      output = JSON.parse(content);
    } catch {
      throw new ModelOutputError('message content is not JSON');
    }
    return readModelOutput(output);
  }

  /** Relative dates are the caller's: the model gets their local time and zone. */
  private clock(context: ParseContext): string {
    const wall = wallTimeAt(context.now, context.timezone);
    const pad = (n: number): string => String(n).padStart(2, '0');
    const local = `${wall.year}-${pad(wall.month)}-${pad(wall.day)} ${pad(wall.hour)}:${pad(wall.minute)}`;
    return `Now: ${context.now.toISOString()} (local time ${local} in ${context.timezone}). Read relative dates in ${context.timezone}.`;
  }

  private userMessage(input: ParseInput): string {
    const parts = [input.text];
    for (const attachment of input.attachments)
      parts.push(`--- Attached file "${attachment.name}" ---\n${attachment.text}`);
    return parts.join('\n\n');
  }
}
