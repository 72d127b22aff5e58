import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { PermanentDeliveryError } from './notification-channel';

/** Where a webhook must never reach: this host, private networks, link-local (cloud metadata) and the like. */
const FORBIDDEN = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, including the metadata service 169.254.169.254
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible ::a.b.c.d (e.g. ::127.0.0.1)
  ['64:ff9b::', 96], // NAT64 of any IPv4 address
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv6');
}

/** IPv4-mapped IPv6 addresses. Apart: a BlockList checks IPv4 addresses against this range as well. */
const IPV4_MAPPED = new BlockList();
IPV4_MAPPED.addSubnet('::ffff:0:0', 96, 'ipv6');

export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  if (family === 6 && IPV4_MAPPED.check(address, 'ipv6')) return true;
  return FORBIDDEN.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** `[::1]` → `::1`: URL keeps the brackets of an IPv6 host. */
function bareHostname(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** A webhook URL whose host is literally a forbidden address (or `localhost`), known without resolving. */
export function isForbiddenLiteralHost(url: URL): boolean {
  const host = bareHostname(url).toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return isIP(host) !== 0 && isForbiddenAddress(host);
}

export interface VettedAddress {
  address: string;
  family: 4 | 6;
}

/** When an attempt gives up: `signal` aborts `ms` milliseconds after the attempt started. */
export interface Deadline {
  signal: AbortSignal;
  ms: number;
}

/** `promise`, or a rejection once `deadline` passes: a name lookup cannot be cancelled, only given up on. */
function beforeDeadline<T>(promise: Promise<T>, deadline: Deadline): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const expire = () => reject(new Error(`timed out after ${deadline.ms} ms`));
    if (deadline.signal.aborted) return expire();
    deadline.signal.addEventListener('abort', expire, { once: true });
    promise.then(resolve, reject).finally(() => deadline.signal.removeEventListener('abort', expire));
  });
}

/**
 * Resolves the webhook host and checks every address it resolves to; the request must then connect to the
 * returned address, so a second resolution (DNS rebinding) cannot point it elsewhere. Without an answer
 * before `deadline` (that of the whole attempt), the resolution fails.
 */
export async function vetWebhookHost(
  url: URL,
  allowPrivate: boolean,
  deadline?: Deadline,
): Promise<VettedAddress> {
  const host = bareHostname(url);
  let addresses: { address: string; family: number }[];
  try {
    const resolving = lookup(host, { all: true, verbatim: true });
    addresses = await (deadline ? beforeDeadline(resolving, deadline) : resolving);
  } catch (error) {
    throw new Error(`cannot resolve ${host}: ${(error as Error).message}`);
  }
  if (addresses.length === 0) throw new Error(`cannot resolve ${host}`);
  if (!allowPrivate) {
    const forbidden = addresses.find(({ address }) => isForbiddenAddress(address));
    if (forbidden) {
      throw new PermanentDeliveryError(
        `refused: ${host} resolves to the non-public address ${forbidden.address}`,
      );
    }
  }
  const [first] = addresses;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}
