import type { Clock } from '../../src/config/clock';

/**
 * A clock a test sets: it stands still at the time given until the test moves it, so a time of day (23:30 in
 * Berlin on the night clocks change) holds for as long as the test needs it. Handed to several instances, they
 * share it.
 */
export class MovableClock implements Clock {
  private current: Date;

  constructor(at: string | Date) {
    this.current = new Date(at);
  }

  now(): Date {
    return new Date(this.current);
  }

  set(at: string | Date): void {
    this.current = new Date(at);
  }

  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}
