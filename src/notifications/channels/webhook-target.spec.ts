import { PermanentDeliveryError } from './notification-channel';
import { isForbiddenAddress, isForbiddenLiteralHost, vetWebhookHost } from './webhook-target';

describe('webhook target checks', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '169.254.0.1',
    '100.64.0.1',
    '100.127.255.254',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    '::7f00:1',
    '::a00:1',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:8.8.8.8',
    '64:ff9b::a00:1',
    'not-an-ip',
  ])('forbids %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '192.169.0.1',
    '2606:4700:4700::1111',
    '2001:4860::8888',
  ])('allows %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });

  it('recognizes literal private hosts in URLs', () => {
    expect(isForbiddenLiteralHost(new URL('http://[::1]:8080/x'))).toBe(true);
    expect(isForbiddenLiteralHost(new URL('http://LOCALHOST/x'))).toBe(true);
    expect(isForbiddenLiteralHost(new URL('http://api.localhost/x'))).toBe(true);
    expect(isForbiddenLiteralHost(new URL('http://0x7f000001/x'))).toBe(true);
    expect(isForbiddenLiteralHost(new URL('http://[::127.0.0.1]/x'))).toBe(true);
    expect(isForbiddenLiteralHost(new URL('https://hooks.example.com/x'))).toBe(false);
    expect(isForbiddenLiteralHost(new URL('https://93.184.215.14/x'))).toBe(false);
  });

  it('refuses a name that resolves to a forbidden address, unless private targets are allowed', async () => {
    await expect(vetWebhookHost(new URL('http://localhost:9/x'), false)).rejects.toBeInstanceOf(
      PermanentDeliveryError,
    );
    await expect(vetWebhookHost(new URL('http://localhost:9/x'), true)).resolves.toEqual({
      address: '127.0.0.1',
      family: 4,
    });
    await expect(vetWebhookHost(new URL('http://[::1]:9/x'), true)).resolves.toEqual({
      address: '::1',
      family: 6,
    });
  });
});
