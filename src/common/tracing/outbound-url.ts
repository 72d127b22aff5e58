import type { RequestOptions } from 'node:http';
import type { Attributes } from '@opentelemetry/api';

/** What stands in a span for a part of a URL that may be a credential. */
export const REDACTED = '[REDACTED]';

/**
 * The URL attributes of an outbound call's span, replacing the instrumentations' own before the span starts:
 * the origin only. A webhook's path is often its secret (Slack's and Discord's are), and the Telegram API's
 * holds the bot token (`/bot<token>/sendMessage`).
 */
export function outboundUrlAttributes(origin: string): Attributes {
  return { 'url.full': origin, 'url.path': REDACTED, 'url.query': REDACTED };
}

/** The origin of a `node:http` request (webhooks, S3), as the HTTP instrumentation's hook receives it. */
export function originOfRequest(options: RequestOptions): string {
  const protocol = options.protocol ?? 'http:';
  const host = options.hostname ?? options.host ?? 'localhost';
  return `${protocol}//${host}${options.port ? `:${options.port}` : ''}`;
}
