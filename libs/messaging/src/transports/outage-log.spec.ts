import { Logger } from '@nestjs/common';
import { FakeClock } from '../common/fake-clock';
import { OUTAGE_SUMMARY_EVERY_MS, OutageLog } from './outage-log';

describe(OutageLog.name, () => {
  let warnings: string[];
  let infos: string[];
  let outage: OutageLog;
  let clock: FakeClock;

  beforeEach(() => {
    clock = new FakeClock();
    warnings = [];
    infos = [];
    jest
      .spyOn(Logger.prototype, 'warn')
      .mockImplementation((message: unknown) => void warnings.push(String(message)));
    jest
      .spyOn(Logger.prototype, 'log')
      .mockImplementation((message: unknown) => void infos.push(String(message)));
    outage = new OutageLog(new Logger('test'), 'Kafka', clock);
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  /** `count` failures, one every `everyMs`. */
  const fail = async (count: number, everyMs: number) => {
    for (let i = 0; i < count; i++) {
      outage.failure(`Connection error ${i}`);
      await clock.advance(everyMs);
    }
  };

  describe('failure', () => {
    // claim: C-87
    it('warns once when failures start, then summarises every 30 s while they go on', async () => {
      await fail(16 * 70, 1_000 / 16); // 16 a second for 70 s
      expect(warnings).toHaveLength(3);
      expect(warnings[0]).toMatch(/^Kafka: Connection error 0 \(further failures are summarised every 30 s/);
      expect(warnings[1]).toMatch(
        /^Kafka still failing after 30 s: 481 failures so far \(last: Connection error 480\)/,
      );
      expect(warnings[2]).toMatch(/^Kafka still failing after 60 s: 961 failures/);
      expect(OUTAGE_SUMMARY_EVERY_MS).toBe(30_000);
    });
  });

  describe('recovered', () => {
    it('says once that it works again, with how long and how many failures', async () => {
      await fail(10, 1_000);
      outage.recovered();
      outage.recovered();
      expect(infos).toEqual(['Kafka works again after 10 s (10 failures).']);
    });

    it('says nothing when nothing failed, and starts afresh after a recovery', async () => {
      outage.recovered();
      expect(infos).toEqual([]);
      await fail(3, 100);
      outage.recovered();
      await fail(3, 100);
      expect(warnings).toHaveLength(2);
    });
  });
});
