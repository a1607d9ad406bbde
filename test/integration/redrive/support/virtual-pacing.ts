import { PacerClock } from 'nest-reliable-messaging/redrive';

/**
 * A replay's pacing on a virtual clock: each `sleep` the pacer asks for moves the time on and admits the next
 * copy then, so a test counts the copies of any one second without waiting for them.
 */
export class VirtualPacing {
  /** The virtual time, ms. */
  private time = 0;
  /** The virtual times at which a copy was admitted after a wait (the first goes at 0, without one). */
  private readonly admitted: number[] = [];
  /** How many waits the pacer asked for. */
  sleeps = 0;

  /** What `ReplayService`'s `pacing` option takes. */
  readonly clock: PacerClock = {
    now: () => this.time,
    sleep: async (ms) => {
      this.sleeps++;
      this.time += ms;
      this.admitted.push(this.time);
    },
  };

  /** The most copies admitted within any one second, the first one's (at 0) included. */
  mostInOneSecond(): number {
    const times = [0, ...this.admitted];
    return Math.max(...times.map((t) => times.filter((u) => u >= t && u < t + 1000).length));
  }
}
