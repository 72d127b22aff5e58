import { createServer } from 'node:net';

/** A TCP port of 127.0.0.1 that nothing listens on now, for a service the test starts. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('No port was assigned')),
      );
    });
  });
}
