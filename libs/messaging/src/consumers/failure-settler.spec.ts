import { Logger } from '@nestjs/common';
import { RetryMode, RetryOrdering } from '../retry/retry-policy.interface';
import { FailureSettler } from './failure-settler';
import { useQuietWarnings } from '../../spec-support/quiet-warnings';
import { Harness, orderWire } from '../../spec-support/pipeline-harness';

const inline = {
  mode: RetryMode.INLINE,
  ordering: RetryOrdering.ALLOW_REORDER,
  backoff: { initialDelayMs: 1_000, multiplier: 2, maxDelayMs: 8_000 },
};

/** The sum of a counter's series whose labels contain `label` (all of them without one). */
async function total(harness: Harness, counter: string, label = ''): Promise<number> {
  const text = await harness.metrics.metrics();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${counter}{`) && line.includes(label))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

function failureLines(): string[] {
  const warn = jest.mocked(Logger.prototype.warn);
  return warn.mock.calls.map(([line]) => String(line)).filter((line) => line.includes('failed'));
}

describe(FailureSettler.name, () => {
  useQuietWarnings();

  describe('handlerFailed', () => {
    it('reports an inline retry as it reports every failure: one failed attempt, one retry, one log line', async () => {
      const harness = new Harness({ policy: { ...inline, maxAttempts: 3 }, failWhile: (a) => a < 2 });
      await expect(harness.withTimePassing(harness.handle(orderWire()))).resolves.toEqual({ kind: 'ACK' });
      await expect(total(harness, 'messaging_consumer_failed_attempts_total')).resolves.toBe(1);
      await expect(total(harness, 'messaging_consumer_retries_total', 'mode="inline"')).resolves.toBe(1);
      expect(failureLines()).toEqual([expect.stringContaining('retrying inline in')]);
    });

    it('counts each failed try once and the dead letter once when the inline retries run out', async () => {
      const harness = new Harness({ policy: { ...inline, maxAttempts: 2 }, failWhile: () => true });
      await expect(harness.withTimePassing(harness.handle(orderWire()))).resolves.toEqual({ kind: 'ACK' });
      await expect(total(harness, 'messaging_consumer_failed_attempts_total')).resolves.toBe(2);
      await expect(total(harness, 'messaging_consumer_retries_total', 'mode="inline"')).resolves.toBe(1);
      await expect(total(harness, 'messaging_dead_lettered_total')).resolves.toBe(1);
      expect(failureLines()).toEqual([
        expect.stringContaining('retrying inline in'),
        expect.stringContaining('dead-lettered'),
      ]);
    });
  });
});
