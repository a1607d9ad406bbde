import { Logger } from '@nestjs/common';
import { FakeClock } from '../common/fake-clock';
import { DatabaseWait } from './database-wait';

describe(DatabaseWait.name, () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  let clock: FakeClock;
  let logger: Logger;
  let stopping: boolean;
  const control = { isStopping: () => stopping, keepAlive: jest.fn(async () => undefined) };

  beforeEach(() => {
    clock = new FakeClock();
    logger = new Logger('test');
    jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
    jest.spyOn(logger, 'log').mockImplementation(() => undefined);
    stopping = false;
    control.keepAlive.mockClear();
  });

  /** How long `after` waited (the clock moves in 10 ms steps until it resolves). */
  async function waited(wait: DatabaseWait, waits: number): Promise<{ ms: number; goOn: boolean }> {
    const started = clock.now();
    let done: boolean | undefined;
    void wait.after(refused, waits, control).then((goOn) => (done = goOn));
    while (done === undefined) await clock.advance(10);
    return { ms: clock.now() - started, goOn: done };
  }

  // claim: C-50
  it('waits 250 ms doubling up to 5 s, jittered to 50–100% of that, keeping the delivery alive', async () => {
    const wait = new DatabaseWait(clock, logger);
    clock.setRandom(0.999);
    const longest = [];
    for (let waits = 0; waits < 7; waits++) longest.push((await waited(wait, waits)).ms);
    expect(longest).toEqual([250, 500, 1_000, 2_000, 4_000, 5_000, 5_000]);
    clock.setRandom(0);
    expect((await waited(wait, 0)).ms).toBe(130); // 125 ms, seen at the next 10 ms step
    expect(control.keepAlive).toHaveBeenCalled();
  });

  it('answers false when the consumer stops while it waits', async () => {
    const wait = new DatabaseWait(clock, logger);
    const going = wait.after(refused, 5, control);
    await clock.advance(1_000);
    stopping = true;
    await clock.advance(1_000);
    await expect(going).resolves.toBe(false);
  });

  it('logs the outage when it starts, every 30 s while it lasts and when it ends, not once per try', async () => {
    const wait = new DatabaseWait(clock, logger);
    for (let i = 0; i < 40; i++) await waited(wait, 10); // about 40 × 3.75 s = 150 s of outage
    const warnings = jest.mocked(logger.warn).mock.calls.map(([line]) => String(line));
    expect(warnings[0]).toMatch(/^The consumer's database does not answer \(Error: connect ECONNREFUSED/);
    expect(warnings.slice(1).every((w) => /still does not answer after \d+\.\d s/.test(w))).toBe(true);
    expect(warnings).toHaveLength(5); // at 0 s, then once per 30 s of the 150
    expect(logger.log).not.toHaveBeenCalled();

    wait.answered();
    wait.answered();
    expect(jest.mocked(logger.log).mock.calls.map(([line]) => String(line))).toEqual([
      "The consumer's database answers again, after 150.0 s.",
    ]);
    // 15,000 steps of the fake clock: 0.35 s alone, past Jest's 5 s while the whole unit project shared two
    // loaded cores with other suites.
  }, 60_000);

  it("keeps each tenant's outage its own: logged by name, ended only by that tenant's database", async () => {
    const wait = new DatabaseWait(clock, logger);
    const going = [wait.after(refused, 0, control, 'acme'), wait.after(refused, 0, control, 'globex')];
    await clock.advance(1_000);
    await Promise.all(going);
    wait.answered('globex');
    wait.answered(); // a tenant-less database answering ends nobody's outage
    await clock.advance(1_000);
    wait.answered('acme');
    const warnings = jest.mocked(logger.warn).mock.calls.map(([line]) => String(line));
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/^Tenant acme's database does not answer/);
    expect(warnings[1]).toMatch(/^Tenant globex's database does not answer/);
    expect(jest.mocked(logger.log).mock.calls.map(([line]) => String(line))).toEqual([
      "Tenant globex's database answers again, after 1.0 s.",
      "Tenant acme's database answers again, after 2.0 s.",
    ]);
  });
});
