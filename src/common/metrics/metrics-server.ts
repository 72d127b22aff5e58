import { once } from 'node:events';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { type AppConfig } from '../../config/config';
import { InjectConfig } from '../../config/config.module';
import { Metrics } from './metrics';

/**
 * `GET /metrics` in the Prometheus text format on METRICS_PORT, a server apart from the API's: the API's port
 * is the public one, and nothing there leads to the metrics. Off (no server) while METRICS_PORT is unset.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  private server: Server | null = null;

  constructor(
    @InjectConfig() private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { port, host } = this.config.metrics;
    if (port === null) return;
    const server = createServer((request, response) => void this.answer(request, response));
    server.listen(port, host);
    await once(server, 'listening');
    this.server = server;
    this.logger.log(`Metrics on ${host}:${this.port()}/metrics`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The port listened on (METRICS_PORT, or the one given for 0); null when off. */
  port(): number | null {
    return this.server ? (this.server.address() as AddressInfo).port : null;
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404).end();
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { Allow: 'GET, HEAD' }).end();
      return;
    }
    try {
      const text = await this.metrics.registry.metrics();
      response.writeHead(200, { 'Content-Type': this.metrics.registry.contentType }).end(text);
    } catch (error) {
      // A collector that failed (the outbox query while the database is out): the scrape fails and says so,
      // and Prometheus's `up` shows it.
      this.logger.warn({ err: error }, 'Metrics collection failed');
      response.writeHead(500).end();
    }
  }
}
