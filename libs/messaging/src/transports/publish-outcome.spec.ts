import { FakeClock } from '../common/fake-clock';
import { CONFIRMED, outcomesWithin, PublishOutcome } from './publish-outcome';

describe(outcomesWithin.name, () => {
  it('answers with the outcomes when they come in time', async () => {
    const clock = new FakeClock();
    await expect(outcomesWithin(async () => [CONFIRMED], 1, 1_000, 'confirm', clock)).resolves.toEqual([
      CONFIRMED,
    ]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('answers AMBIGUOUS for every message at the deadline, and aborts the publish’s signal', async () => {
    const clock = new FakeClock();
    let signal: AbortSignal | undefined;
    const outcomes = outcomesWithin(
      (s) => {
        signal = s;
        return new Promise<PublishOutcome[]>(() => undefined);
      },
      2,
      1_000,
      'broker confirmation',
      clock,
    );
    await clock.advance(999);
    expect(signal?.aborted).toBe(false);
    await clock.advance(1);
    const answered = await outcomes;
    expect(answered.map((o) => o.status)).toEqual(['AMBIGUOUS', 'AMBIGUOUS']);
    expect(answered[0].status !== 'CONFIRMED' && answered[0].error.message).toBe(
      'no broker confirmation within 1000 ms',
    );
    expect(signal?.aborted).toBe(true);
  });

  it('answers AMBIGUOUS when the publish throws instead of answering', async () => {
    const outcomes = await outcomesWithin(
      () => {
        throw new Error('Channel closed');
      },
      1,
      1_000,
      'confirm',
      new FakeClock(),
    );
    expect(outcomes[0].status).toBe('AMBIGUOUS');
  });
});
