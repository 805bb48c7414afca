import { Clock } from '../../src/common/clock.js';

/** A clock that runs with real time but can be moved (billing periods); the app takes it through startApp. */
export class MovableClock extends Clock {
  private offsetMs = 0;

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  travelTo(at: Date): void {
    this.offsetMs = at.getTime() - Date.now();
  }
}
