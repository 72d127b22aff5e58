import { createHash } from 'node:crypto';
import { normalizeEmail } from '../validation/email';

/**
 * Avatar lookup key: SHA-256 hex of the trimmed, lower-cased e-mail. The class member list and
 * the grader's submission list both use it, so one user has one avatar everywhere.
 */
export function avatarHash(email: string): string {
  return createHash('sha256').update(normalizeEmail(email)).digest('hex');
}
