import { originOfRequest, outboundUrlAttributes, REDACTED } from './outbound-url';

describe('outbound URLs in spans', () => {
  it("keep a Telegram call's origin, never its bot token", () => {
    const attributes = outboundUrlAttributes('https://api.telegram.org');
    expect(attributes).toEqual({
      'url.full': 'https://api.telegram.org',
      'url.path': REDACTED,
      'url.query': REDACTED,
    });
    expect(JSON.stringify(attributes)).not.toContain('bot');
  });

  it("name a node:http request's origin from its options, with the port when one is given", () => {
    expect(
      originOfRequest({ protocol: 'https:', hostname: 'hooks.example.com', path: '/services/T0/B0/secret' }),
    ).toBe('https://hooks.example.com');
    expect(originOfRequest({ host: '127.0.0.1', port: 9000, path: '/bucket/key' })).toBe(
      'http://127.0.0.1:9000',
    );
  });
});
