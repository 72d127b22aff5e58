import { Inject } from '@nestjs/common';

/**
 * The time the notification schedules and the delivery outbox go by (quiet hours, digests, due deliveries,
 * back-off, claim leases). Production uses the system clock; a test hands `createApp` one it sets, to be at
 * 23:30 in Berlin on the night clocks change without waiting for it.
 */
export interface Clock {
  now(): Date;
}

export const SYSTEM_CLOCK: Clock = { now: () => new Date() };

export const CLOCK = Symbol('CLOCK');

/** Injects the clock: `@InjectClock() private readonly clock: Clock`. */
export const InjectClock = (): ParameterDecorator => Inject(CLOCK);
