/** Stored error text is cut to this length: a receiver's answer may be of any size. */
export const MAX_ERROR_LENGTH = 500;

const REDACTED = '[redacted]';

/**
 * Known secret shapes, for secrets this instance does not hold (an old bot token, another preference's key):
 * a Telegram bot path (`/bot<id>:<token>`), a Standard Webhooks key, the credentials of a URL.
 */
const SECRET_SHAPES: [RegExp, string][] = [
  [/bot\d+:[\w-]+/g, `bot${REDACTED}`],
  [/whsec_[A-Za-z0-9+/=]+/g, REDACTED],
  [/\/\/[^/\s:@]+:[^/\s@]+@/g, `//${REDACTED}@`],
];

/**
 * The text of a failed attempt as the delivery log shows it to the recipient: without `secrets` (the bot
 * token, the SMTP password, the webhook key; each also URL-encoded) or anything shaped like one, on one line,
 * and at most MAX_ERROR_LENGTH characters.
 */
export function deliveryErrorText(error: unknown, secrets: (string | null | undefined)[]): string {
  let text = error instanceof Error ? error.message : String(error);
  const known = secrets
    .filter((secret): secret is string => Boolean(secret))
    .flatMap((secret) => [secret, encodeURIComponent(secret)])
    // Longest first, so a secret containing another is replaced whole.
    .sort((a, b) => b.length - a.length);
  for (const secret of known) text = text.split(secret).join(REDACTED);
  for (const [shape, replacement] of SECRET_SHAPES) text = text.replace(shape, replacement);
  text = text.replace(/\s+/g, ' ').trim();
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text;
}
