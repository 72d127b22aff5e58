import { ConfigError, Env, int, optional, str, url } from './env';

/**
 * Task parsing.
 * - `AI_PROVIDER` (`local`): `local` (built-in parser) or `openai` (any OpenAI-compatible chat API).
 * - `AI_BASE_URL` (`https://api.openai.com/v1`), `AI_API_KEY` (unset), `AI_MODEL` (`gpt-4o-mini`),
 *   `AI_TIMEOUT_MS` (`20000`): the `openai` provider.
 * - `AI_LOCAL_THREADS` (`1`): worker threads of the `local` parser.
 */
export interface AiConfig {
  ai: {
    provider: 'local' | 'openai';
    baseUrl: string;
    apiKey: string | null;
    model: string;
    timeoutMs: number;
    /** Worker threads of the local parser, each parsing one text at a time. */
    localThreads: number;
  };
}

export function aiConfig(env: Env): AiConfig {
  const provider = str(env, 'AI_PROVIDER', 'local');
  if (provider !== 'local' && provider !== 'openai') {
    throw new ConfigError('AI_PROVIDER', `must be "local" or "openai", got "${provider}"`);
  }
  return {
    ai: {
      provider,
      baseUrl: url(env, 'AI_BASE_URL', 'https://api.openai.com/v1', ['http:', 'https:']),
      apiKey: optional(env, 'AI_API_KEY'),
      model: str(env, 'AI_MODEL', 'gpt-4o-mini'),
      timeoutMs: int(env, 'AI_TIMEOUT_MS', 20000, 1, 600000),
      localThreads: int(env, 'AI_LOCAL_THREADS', 1, 1, 64),
    },
  };
}
