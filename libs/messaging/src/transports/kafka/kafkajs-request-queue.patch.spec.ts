import { patchKafkajsRequestQueue } from './kafkajs-request-queue.patch';

type Queue = {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: unknown;
  scheduleCheckPendingRequests(): void;
  destroy(): void;
};
/* eslint-disable-next-line @typescript-eslint/no-require-imports -- kafkajs's RequestQueue has no typed entry point */
const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as new (options: object) => Queue;

function queue(): Queue {
  const logger = { debug: () => undefined, warn: () => undefined, error: () => undefined };
  return new RequestQueue({
    maxInFlightRequests: 1,
    requestTimeout: 30_000,
    clientId: 't',
    broker: 'b',
    logger,
  });
}

/** The delays `scheduleCheckPendingRequests` set timers with. */
function delaysOf(q: Queue): number[] {
  const setTimeoutSpy = jest.spyOn(global, 'setTimeout');
  try {
    q.scheduleCheckPendingRequests();
    return setTimeoutSpy.mock.calls.map(([, ms]) => ms ?? 0);
  } finally {
    setTimeoutSpy.mockRestore();
    q.destroy();
  }
}

describe(patchKafkajsRequestQueue.name, () => {
  // Contract: the installed kafkajs still has the defect. When this fails, kafkajs fixed it: drop the patch.
  it('(kafkajs as installed) sets a negative timeout when nothing waits: Node 24 warns TimeoutNegativeWarning', () => {
    const [delay] = delaysOf(queue());
    expect(delay).toBeLessThan(0);
  });

  describe('patched', () => {
    beforeAll(() => patchKafkajsRequestQueue());

    it('sets no timer when no request waits', () => {
      expect(delaysOf(queue())).toEqual([]);
    });

    it("checks waiting requests after kafkajs's 10 ms interval, or when the throttle ends", () => {
      const waiting = queue();
      waiting.pending.push({});
      expect(delaysOf(waiting)).toEqual([10]);

      const throttled = queue();
      throttled.pending.push({});
      throttled.throttledUntil = Date.now() + 5_000;
      const [delay] = delaysOf(throttled);
      expect(delay).toBeGreaterThan(4_000);
      expect(delay).toBeLessThanOrEqual(5_000);
    });

    it('is applied once, however many transports are created', () => {
      patchKafkajsRequestQueue();
      expect(delaysOf(queue())).toEqual([]);
    });
  });
});
