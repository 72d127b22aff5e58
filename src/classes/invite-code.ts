import { randomInt } from 'node:crypto';

/** No 0/O, 1/I: codes are read aloud and typed by hand. */
export const INVITE_CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
export const INVITE_CODE_LENGTH = 10;

/** A fresh invite code from a cryptographic source; uniqueness is left to the database constraint. */
export function generateInviteCode(): string {
  let code = '';
  for (let i = 0; i < INVITE_CODE_LENGTH; i++)
    code += INVITE_CODE_ALPHABET[randomInt(INVITE_CODE_ALPHABET.length)];
  return code;
}

/** Invite codes are accepted trimmed and in any case. */
export function normalizeInviteCode(input: string): string {
  return input.trim().toUpperCase();
}

const MAX_ATTEMPTS = 5;

/**
 * Runs `attempt` with fresh codes until it is not refused as a duplicate (`attempt` answers undefined on a
 * unique collision). With 32^10 codes a second attempt is already rare; five failing means something else.
 */
export async function withFreshInviteCode<T>(attempt: (code: string) => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < MAX_ATTEMPTS; i++) {
    const result = await attempt(generateInviteCode());
    if (result !== undefined) return result;
  }
  throw new Error(`No unique invite code after ${MAX_ATTEMPTS} attempts`);
}
