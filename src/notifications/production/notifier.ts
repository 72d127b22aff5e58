import { Injectable } from '@nestjs/common';
import { Db, one } from '../../database/sql';
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
 * They are PENDING until the delivery loop routes them to the inbox and the recipient's channels.
 */
@Injectable()
export class Notifier {
  async produce(db: Db, fanOut: CompiledFanOut, values: unknown[] = []): Promise<Produced> {
    return (await one<Produced>(db, fanOut.sql, values))!;
  }
}
