import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/config';
import { InjectConfig } from '../../config/config.module';
import { bulkRows, Db } from '../../database/sql';
import { CompiledFanOut } from './notification-fan-out';

/** What one fan-out statement produced. */
export interface Produced {
  /** Events notified (see `NotificationFanOut.events`). */
  events: number;
  notifications: number;
}

/**
 * The one way to produce notifications, for every module: `produce` runs a fan-out (`compileFanOut`) in the
 * caller's transaction (`db`), so the notifications exist exactly when the write that causes them commits.
 * They are PENDING until the delivery loop routes them to the inbox and the recipient's channels. A fan-out
 * over a large class may take longer than an interactive statement: it has the bulk statement limit.
 */
@Injectable()
export class Notifier {
  constructor(@InjectConfig() private readonly config: Pick<AppConfig, 'database'>) {}

  async produce(db: Db, fanOut: CompiledFanOut, values: unknown[] = []): Promise<Produced> {
    const limitMs = this.config.database.bulkQueryTimeoutMs;
    return (await bulkRows<Produced>(db, limitMs, fanOut.sql, values))[0];
  }
}
