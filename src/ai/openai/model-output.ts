import { isIsoTimestamp } from '../../common/validation/validators';
import { DESCRIPTION_MAX_LENGTH, fitTitle, MAX_TIME_OPTIONS, ParseResult, TimeOption } from '../ai-provider';

/** The model answered something that is not a ParseResult; the caller answers with every field null. */
export class ModelOutputError extends Error {}

const KEYS = ['title', 'timeOptions', 'allowLateSubmission', 'description'] as const;
/** A longer title is no title but a model gone astray; a shorter one too long is cut by fitTitle. */
const MODEL_TITLE_MAX_LENGTH = 800;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown, field: string, maxLength: number): string | null {
  if (value === null) return null;
  if (typeof value !== 'string') throw new ModelOutputError(`${field} is not a string`);
  const trimmed = value.trim();
  if (trimmed.length > maxLength) throw new ModelOutputError(`${field} is longer than ${maxLength}`);
  return trimmed.length > 0 ? trimmed : null;
}

function timestamp(value: unknown, field: string): string | null {
  if (value === null) return null;
  if (!isIsoTimestamp(value)) throw new ModelOutputError(`${field} is not an ISO timestamp with an offset`);
  return new Date(value).toISOString();
}

function timeOption(value: unknown, index: number): TimeOption {
  if (!isRecord(value) || !('startAt' in value) || !('dueAt' in value)) {
    throw new ModelOutputError(`timeOptions[${index}] is not {startAt, dueAt}`);
  }
  const option = {
    startAt: timestamp(value.startAt, `timeOptions[${index}].startAt`),
    dueAt: timestamp(value.dueAt, `timeOptions[${index}].dueAt`),
  };
  if (option.startAt && option.dueAt && option.dueAt < option.startAt) {
    throw new ModelOutputError(`timeOptions[${index}] is due before it starts`);
  }
  return option;
}

/**
 * Strict reading of the model's JSON: all four keys present with the right types, timestamps ISO 8601 with an
 * offset, at least one time option. More than 3 options (each still valid) are cut to the first 3, which the
 * prompt asks to be the most likely first.
 */
export function readModelOutput(value: unknown): ParseResult {
  if (!isRecord(value)) throw new ModelOutputError('answer is not a JSON object');
  const missing = KEYS.filter((key) => !(key in value));
  if (missing.length > 0) throw new ModelOutputError(`answer lacks ${missing.join(', ')}`);
  const { timeOptions, allowLateSubmission } = value;
  if (!Array.isArray(timeOptions) || timeOptions.length === 0) {
    throw new ModelOutputError('timeOptions is not a non-empty array');
  }
  if (allowLateSubmission !== null && typeof allowLateSubmission !== 'boolean') {
    throw new ModelOutputError('allowLateSubmission is not a boolean');
  }
  const title = text(value.title, 'title', MODEL_TITLE_MAX_LENGTH);
  return {
    title: title && fitTitle(title),
    timeOptions: timeOptions.map(timeOption).slice(0, MAX_TIME_OPTIONS),
    allowLateSubmission,
    description: text(value.description, 'description', DESCRIPTION_MAX_LENGTH),
  };
}
