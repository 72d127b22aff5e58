import { deliveryErrorText, MAX_ERROR_LENGTH } from './delivery-error';

describe('deliveryErrorText', () => {
  it('removes the given secrets, also URL-encoded', () => {
    const text = deliveryErrorText(new Error('auth p@ss/word failed; url p%40ss%2Fword'), [
      'p@ss/word',
      null,
    ]);
    expect(text).toBe('auth [redacted] failed; url [redacted]');
  });

  it('removes what is shaped like a bot token, a webhook key or URL credentials', () => {
    const text = deliveryErrorText(
      'GET https://api.telegram.org/bot999:AAH-x_y/getMe; key whsec_abc+/=; smtp://user:pw@mail.test:587',
      [],
    );
    expect(text).toBe(
      'GET https://api.telegram.org/bot[redacted]/getMe; key [redacted]; smtp://[redacted]@mail.test:587',
    );
  });

  it('puts the text on one line and cuts it', () => {
    expect(deliveryErrorText('a\n\n  b\tc ', [])).toBe('a b c');
    const long = deliveryErrorText('x'.repeat(10_000), []);
    expect(long).toHaveLength(MAX_ERROR_LENGTH);
    expect(long.endsWith('…')).toBe(true);
  });
});
