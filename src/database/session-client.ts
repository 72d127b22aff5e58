import { Socket } from 'node:net';
import { Client, ClientConfig } from 'pg';
import { AppConfig } from '../config/config';
import { FailFastClient } from './fail-fast-client';
import { connectionSettings } from './typeorm-options';

/**
 * A connection of its own, for a session lock held across several statements: the deadlines of the pool's
 * connections (connect, statement, answer, keepalive), so a database that stops answering fails the lock's
 * holder within seconds instead of leaving it, and the shutdown that waits for it, hanging.
 */
export function sessionClient(
  config: Pick<AppConfig, 'database'>,
  databaseUrl: string,
  applicationName: string,
): Client {
  return withOwnSocket((socketConfig) => new FailFastClient(socketConfig), {
    ...connectionSettings(config, { statementLimits: true, pooled: false }),
    connectionString: databaseUrl,
    application_name: applicationName,
  });
}

/** The socket of each client made by `withOwnSocket`. */
const ownSockets = new WeakMap<Client, Socket>();

/**
 * A client on a socket this process makes and hands to pg (its `stream` option), so that the socket can be
 * closed when the server does not answer: pg's `end()` waits for the server to close the connection.
 */
export function withOwnSocket<C extends Client>(make: (config: ClientConfig) => C, config: ClientConfig): C {
  const socket = new Socket();
  const client = make({ ...config, stream: () => socket });
  ownSockets.set(client, socket);
  return client;
}

/** How long a connection being dropped may take to say goodbye before its socket is simply closed. */
const END_GRACE_MS = 1_000;

/**
 * Ends `client` (made by `withOwnSocket`) politely, or closes its socket when the other side does not answer
 * within END_GRACE_MS.
 */
export async function endWithin(client: Client): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, END_GRACE_MS)));
  await Promise.race([client.end().catch(() => undefined), late]);
  clearTimeout(timer);
  ownSockets.get(client)?.destroy();
}
