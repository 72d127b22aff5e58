import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'sealed.v1.';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Text kept in the database that must not be readable from it (a dump, a read replica, a backup): a kept
 * answer that carries a credential, a mail that carries a one-time link. AES-256-GCM under a key derived from
 * the JWT secret (HKDF-SHA-256 with the purpose as its `info`, so each use has a key of its own and none is a
 * token key), bound to a context (the row it belongs to), so a sealed text moved to another row does not open.
 * A new JWT secret makes the texts sealed before it unreadable: `open` answers null.
 */
export class SealedText {
  private readonly key: Buffer;

  constructor(jwtSecret: string, purpose: string) {
    this.key = Buffer.from(hkdfSync('sha256', jwtSecret, '', `sealed text: ${purpose}`, 32));
  }

  /** `text` sealed for `context`: `sealed.v1.` and base64url of nonce, tag and ciphertext. */
  seal(text: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return VERSION + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** The text `sealed` holds for `context`; null when it does not open (another key or context, altered). */
  open(sealed: string, context: string): string | null {
    if (!SealedText.isSealed(sealed)) return null;
    const bytes = Buffer.from(sealed.slice(VERSION.length), 'base64url');
    if (bytes.length < IV_BYTES + TAG_BYTES) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([
        decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      return null;
    }
  }

  static isSealed(text: string): boolean {
    return text.startsWith(VERSION);
  }
}
