import { createHash } from 'node:crypto';
import { avatarHash } from './avatar';

describe('avatarHash', () => {
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

  it('is the SHA-256 hex of the trimmed, lower-cased e-mail', () => {
    expect(avatarHash('  Ada@Example.COM ')).toBe(sha256('ada@example.com'));
    expect(avatarHash('ada@example.com')).toMatch(/^[0-9a-f]{64}$/);
  });
});
