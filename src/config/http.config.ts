import { isIP } from 'node:net';
import { ConfigError, Env, int, MAX_TIMER_MS, str, url } from './env';

/**
 * The HTTP server.
 * - `PORT` (`3000`).
 * - `APP_URL` (`http://localhost:3000`): base of the web client, for links in e-mails.
 * - `EMAIL_CHANGE_LINK_PATH` (`/settings/verify-email`): the web client's page that confirms a new e-mail
 *   address; the link of the e-mail change mail is `APP_URL` + this path + `?token=…`.
 * - `PUBLIC_URL` (`http://localhost:${PORT}`): the service's own public base, for absolute links to itself
 *   (signed file URLs, calendar feeds).
 * - `CORS_ORIGINS` (`*`): `*`, or comma-separated origins exactly as browsers send them.
 * - `CORS_MAX_AGE_SECONDS` (`7200`, 0–86400): how long browsers may keep a preflight's answer.
 * - `TRUST_PROXY` (`loopback`): Express's `trust proxy`, which peers' `X-Forwarded-For` names the client IP.
 * - `HTTP_HEADERS_TIMEOUT_MS` (`20000`), `HTTP_REQUEST_TIMEOUT_MS` (`300000`), `HTTP_KEEP_ALIVE_TIMEOUT_MS`
 *   (`5000`): Node's limits for slow clients.
 */
export interface HttpConfig {
  port: number;
  appUrl: string;
  /** Path under `appUrl` of the client page that confirms a new e-mail address (`/…`, no query). */
  emailChangeLinkPath: string;
  /** The service's own public base (no trailing slash), for links that lead back to this API. */
  publicUrl: string;
  corsOrigins: string[] | true;
  /**
   * `Access-Control-Max-Age` of preflight answers. Chromium keeps one at most 7200 s, Firefox 86400 s; without
   * it Chromium keeps it 5 s, so nearly every bearer request paid a preflight.
   */
  corsMaxAgeSeconds: number;
  /** Express's `trust proxy`: which peers' `X-Forwarded-For` names the client IP (per-IP limits). */
  trustProxy: boolean | number | string[];
  /**
   * Node's HTTP server limits for slow clients: all request headers within `headersTimeoutMs`, the whole
   * request (headers and body) within `requestTimeoutMs`; an idle keep-alive connection closes after
   * `keepAliveTimeoutMs`.
   */
  http: { headersTimeoutMs: number; requestTimeoutMs: number; keepAliveTimeoutMs: number };
}

export function httpConfig(env: Env): HttpConfig {
  const port = int(env, 'PORT', 3000, 0, 65535);
  return {
    port,
    appUrl: url(env, 'APP_URL', 'http://localhost:3000', ['http:', 'https:']),
    emailChangeLinkPath: linkPath(env, 'EMAIL_CHANGE_LINK_PATH', '/settings/verify-email'),
    publicUrl: url(env, 'PUBLIC_URL', `http://localhost:${port}`, ['http:', 'https:']),
    corsOrigins: corsOrigins(env),
    corsMaxAgeSeconds: int(env, 'CORS_MAX_AGE_SECONDS', 7200, 0, 86_400),
    trustProxy: trustProxy(env),
    http: httpTimeouts(env),
  };
}

/** One or more `/segment`s of URL-safe characters: the link appends `?token=…` to it. */
const LINK_PATH = /^(\/[A-Za-z0-9._~-]+)+$/;

function linkPath(env: Env, name: string, fallback: string): string {
  const path = str(env, name, fallback).trim();
  if (!LINK_PATH.test(path)) {
    throw new ConfigError(
      name,
      `must be a path such as ${fallback} (no query, no trailing /), got "${path}"`,
    );
  }
  return path;
}

/** The request timeout covers the headers too, so a longer headers timeout could never fire. */
function httpTimeouts(env: Env): HttpConfig['http'] {
  const headersTimeoutMs = int(env, 'HTTP_HEADERS_TIMEOUT_MS', 20_000, 100, MAX_TIMER_MS);
  const requestTimeoutMs = int(env, 'HTTP_REQUEST_TIMEOUT_MS', 300_000, 100, MAX_TIMER_MS);
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      'HTTP_HEADERS_TIMEOUT_MS',
      `must not be above HTTP_REQUEST_TIMEOUT_MS (${requestTimeoutMs}), got ${headersTimeoutMs}`,
    );
  }
  const keepAliveTimeoutMs = int(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 5_000, 1, MAX_TIMER_MS);
  return { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs };
}

function corsOrigins(env: Env): string[] | true {
  const raw = str(env, 'CORS_ORIGINS', '*').trim();
  if (raw === '*') return true;
  return raw.split(',').map((entry) => {
    const origin = entry.trim();
    let parsed: URL | null = null;
    try {
      parsed = new URL(origin);
    } catch {
      // reported below
    }
    // An Origin header has no path, not even `/`: any other spelling would match no request.
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin) {
      throw new ConfigError(
        'CORS_ORIGINS',
        `must be * or comma-separated origins such as https://app.example.org, got "${origin}"`,
      );
    }
    return origin;
  });
}

const PROXY_PRESETS = ['loopback', 'linklocal', 'uniquelocal'];

function isProxyAddress(entry: string): boolean {
  if (PROXY_PRESETS.includes(entry)) return true;
  const [address, bits, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (bits === undefined) return true;
  return /^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

/** `true`, `false`, a number of proxy hops, or addresses, CIDR ranges and presets (Express's own forms). */
function trustProxy(env: Env): boolean | number | string[] {
  const raw = str(env, 'TRUST_PROXY', 'loopback').trim();
  if (raw === 'true' || raw === 'false') return raw === 'true';
  if (/^\d+$/.test(raw)) return Number(raw);
  const entries = raw.split(',').map((entry) => entry.trim());
  const invalid = entries.find((entry) => !isProxyAddress(entry));
  if (invalid !== undefined) {
    throw new ConfigError(
      'TRUST_PROXY',
      `must be true, false, a number of hops, or addresses, CIDR ranges, loopback, linklocal or uniquelocal, got "${invalid}"`,
    );
  }
  return entries;
}
