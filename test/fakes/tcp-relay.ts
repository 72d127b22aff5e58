import { AddressInfo, connect, createServer, Socket } from 'node:net';

/** One client connection and its connection to the target. */
interface Link {
  client: Socket;
  upstream: Socket | null;
  /** Silent: bytes in either direction are dropped and neither side hears of the other closing. */
  silent: boolean;
}

export interface TcpRelay {
  /** The port on 127.0.0.1 to connect to instead of the target. */
  port: number;
  /**
   * A silent network: every connection open now drops its bytes from here on, and new connections are
   * accepted but reach nothing. Sockets stay open, as a peer that vanished leaves them.
   */
  blackhole(): void;
  /** Only the connection whose upstream socket has this local port (a backend's `client_port`) goes silent. */
  blackholeUpstreamPort(port: number): void;
  /**
   * Every connection open now is reset, as a restarting server's or a broken network's are: the client sees
   * `ECONNRESET` on its next read, whatever it was waiting for.
   */
  reset(): void;
  /** New connections reach the target again; the ones made silent stay silent, like after a failover. */
  resume(): void;
  /** Connections relayed now, silent ones included. */
  connections(): number;
  close(): Promise<void>;
}

/** A TCP relay on 127.0.0.1 (random port) to `target`, whose network the test can make silent. */
export async function startTcpRelay(target: { host: string; port: number }): Promise<TcpRelay> {
  const links = new Set<Link>();
  let silent = false;

  const forward = (link: Link, from: Socket, to: () => Socket | null) => {
    from.on('data', (chunk) => {
      if (!link.silent) to()?.write(chunk);
    });
    from.on('error', () => undefined);
    from.on('close', () => {
      links.delete(link);
      if (!link.silent) to()?.destroy();
    });
  };

  const server = createServer((client) => {
    const link: Link = { client, upstream: null, silent };
    links.add(link);
    if (link.silent) {
      forward(link, client, () => null);
      return;
    }
    link.upstream = connect(target.port, target.host);
    forward(link, client, () => link.upstream);
    forward(link, link.upstream, () => link.client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return {
    port: (server.address() as AddressInfo).port,
    blackhole() {
      silent = true;
      for (const link of links) link.silent = true;
    },
    blackholeUpstreamPort(port: number) {
      const link = [...links].find((candidate) => candidate.upstream?.localPort === port);
      if (!link) throw new Error(`no relayed connection from local port ${port}`);
      link.silent = true;
    },
    reset() {
      for (const link of links) {
        link.silent = true;
        link.client.resetAndDestroy();
        link.upstream?.destroy();
      }
    },
    resume() {
      silent = false;
    },
    connections: () => links.size,
    async close() {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const link of links) {
        link.client.destroy();
        link.upstream?.destroy();
      }
      links.clear();
      await closed;
    },
  };
}
