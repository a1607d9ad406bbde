/** The part of kafkajs's per-connection `RequestQueue` the patch touches (kafkajs 2.2). */
interface RequestQueue {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** kafkajs's own interval between checks of a queue whose requests wait (its `CHECK_PENDING_REQUESTS_INTERVAL`). */
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;

const PATCHED = Symbol.for('nest-reliable-messaging.kafkajs-request-queue');

/**
 * kafkajs 2.2's `RequestQueue.scheduleCheckPendingRequests` sets a timer of `throttledUntil - Date.now()` ms
 * also when no request waits and no throttle is in force (`throttledUntil` is -1 then): a negative delay, which
 * Node 24 reports on stderr as a `TimeoutNegativeWarning` (`-1796587093952 is a negative number`) the first
 * time, at every start of an application that publishes; Node runs it after 1 ms, and the timer, finding
 * nothing to send, sets the next one: a 1 ms timer loop per connection that ever queued a request (the
 * idempotent producer's one request in flight queues the second). The patch schedules only what kafkajs
 * means to: when requests wait, a check when the throttle ends, or after kafkajs's 10 ms interval. Nothing
 * waits: no timer (`push()` schedules one when it queues a request). Applied once per process, when the
 * Kafka transport is created; `kafkajs-request-queue.patch.spec.ts` checks it against the installed kafkajs.
 * A kafkajs of another layout is left unpatched (the warning comes back; nothing fails to start).
 */
export function patchKafkajsRequestQueue(): void {
  let prototype: (RequestQueue & { [PATCHED]?: true }) | undefined;
  try {
    /* eslint-disable-next-line @typescript-eslint/no-require-imports -- kafkajs's RequestQueue has no typed entry point */
    prototype = (require('kafkajs/src/network/requestQueue/index.js') as { prototype: typeof prototype })
      .prototype;
  } catch {
    return; // another kafkajs layout: left as it is (a warning, never a failure; the spec says when to revisit)
  }
  if (!prototype || prototype[PATCHED]) return;
  if (typeof prototype.scheduleCheckPendingRequests !== 'function') return;
  // kafkajs's own method, on kafkajs's time: its throttle is a Date.now() timestamp, its timers are real.
  /* eslint-disable no-restricted-properties, no-restricted-globals */
  prototype.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(this: RequestQueue): void {
    if (this.throttleCheckTimeoutId || this.pending.length === 0) return;
    const throttledFor = this.throttledUntil - Date.now();
    this.throttleCheckTimeoutId = setTimeout(
      () => {
        this.throttleCheckTimeoutId = null;
        this.checkPendingRequests();
      },
      throttledFor > 0 ? throttledFor : CHECK_PENDING_REQUESTS_INTERVAL_MS,
    );
  };
  /* eslint-enable no-restricted-properties, no-restricted-globals */
  Object.defineProperty(prototype, PATCHED, { value: true });
}
