import { itRejects } from '../../test/utils/config';
import { httpConfig } from './http.config';

describe('httpConfig', () => {
  it('defaults to 20 s, 300 s and 5 s HTTP timeouts', () => {
    expect(httpConfig({}).http).toEqual({
      headersTimeoutMs: 20_000,
      requestTimeoutMs: 300_000,
      keepAliveTimeoutMs: 5_000,
    });
  });

  it('reads TRUST_PROXY in the forms Express takes; loopback by default', () => {
    expect(httpConfig({}).trustProxy).toEqual(['loopback']);
    expect(httpConfig({ TRUST_PROXY: '10.0.0.0/8, loopback, fd00::/8' }).trustProxy).toEqual([
      '10.0.0.0/8',
      'loopback',
      'fd00::/8',
    ]);
    expect(httpConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(httpConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
  });

  it('links e-mail changes to the web client page /settings/verify-email unless told another path', () => {
    expect(httpConfig({}).emailChangeLinkPath).toBe('/settings/verify-email');
    expect(httpConfig({ EMAIL_CHANGE_LINK_PATH: '/email/confirm' }).emailChangeLinkPath).toBe(
      '/email/confirm',
    );
  });

  it('defaults PUBLIC_URL to the local address of PORT', () => {
    expect(httpConfig({ PORT: '8080' }).publicUrl).toBe('http://localhost:8080');
    expect(httpConfig({ PUBLIC_URL: 'https://api.example/' }).publicUrl).toBe('https://api.example');
  });

  it('lets browsers keep a preflight 7200 s (Chromium keeps none longer) unless told otherwise', () => {
    expect(httpConfig({}).corsMaxAgeSeconds).toBe(7200);
    expect(httpConfig({ CORS_MAX_AGE_SECONDS: '0' }).corsMaxAgeSeconds).toBe(0);
  });

  itRejects(httpConfig, [
    ['PORT', { PORT: 'abc' }],
    ['PORT', { PORT: '70000' }],
    ['APP_URL', { APP_URL: 'ftp://app.example' }],
    ['EMAIL_CHANGE_LINK_PATH', { EMAIL_CHANGE_LINK_PATH: 'settings/verify-email' }],
    ['EMAIL_CHANGE_LINK_PATH', { EMAIL_CHANGE_LINK_PATH: '/verify?token=' }],
    ['EMAIL_CHANGE_LINK_PATH', { EMAIL_CHANGE_LINK_PATH: '/settings/' }],
    ['PUBLIC_URL', { PUBLIC_URL: 'api.example' }],
    // Origins a browser never sends, so they would silently allow nothing.
    ['CORS_ORIGINS', { CORS_ORIGINS: 'https://app.example/' }],
    ['CORS_ORIGINS', { CORS_ORIGINS: 'app.example' }],
    ['CORS_ORIGINS', { CORS_ORIGINS: 'https://a.example,' }],
    ['CORS_ORIGINS', { CORS_ORIGINS: 'https://a.example, *' }],
    ['CORS_MAX_AGE_SECONDS', { CORS_MAX_AGE_SECONDS: '-1' }],
    ['CORS_MAX_AGE_SECONDS', { CORS_MAX_AGE_SECONDS: '86401' }],
    ['TRUST_PROXY', { TRUST_PROXY: 'load-balancer' }],
    ['TRUST_PROXY', { TRUST_PROXY: '10.0.0.0/33' }],
    ['TRUST_PROXY', { TRUST_PROXY: 'loopback,' }],
    ['HTTP_HEADERS_TIMEOUT_MS', { HTTP_HEADERS_TIMEOUT_MS: '50' }],
    // The request timeout covers the headers: a longer headers timeout could never fire.
    ['HTTP_HEADERS_TIMEOUT_MS', { HTTP_HEADERS_TIMEOUT_MS: '60000', HTTP_REQUEST_TIMEOUT_MS: '30000' }],
    ['HTTP_REQUEST_TIMEOUT_MS', { HTTP_REQUEST_TIMEOUT_MS: '1.5' }],
    ['HTTP_KEEP_ALIVE_TIMEOUT_MS', { HTTP_KEEP_ALIVE_TIMEOUT_MS: '0' }],
  ]);
});
