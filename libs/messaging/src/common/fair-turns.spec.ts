import { FakeClock } from '../common/fake-clock';
import { FairTurns } from './fair-turns';

describe(FairTurns.name, () => {
  describe('acquire', () => {
    it('gives turns first come, first served: a tenant that asks again waits behind the others', async () => {
      const turns = new FairTurns(1, new FakeClock(), 2_000);
      const order: string[] = [];
      const claim = async (tenant: string) => {
        const giveBack = await turns.acquire();
        order.push(tenant);
        giveBack();
      };
      // The busy tenant holds the turn; two small ones ask; the busy one asks again after them.
      const first = await turns.acquire();
      const waiting = [claim('small-1'), claim('small-2')];
      const again = claim('busy');
      first();
      await Promise.all([...waiting, again]);
      expect(order).toEqual(['small-1', 'small-2', 'busy']);
    });

    it('lets `concurrent` claims run at once and counts the waiting ones', async () => {
      const turns = new FairTurns(2, new FakeClock(), 2_000);
      const a = await turns.acquire();
      await turns.acquire();
      const third = turns.acquire();
      expect(turns.load).toEqual({ active: 2, waiting: 1 });
      a();
      (await third)();
      expect(turns.load).toEqual({ active: 1, waiting: 0 });
    });

    it('takes a turn back from a claim that holds it past holdAtMostMs (a database that hangs)', async () => {
      const clock = new FakeClock();
      const turns = new FairTurns(1, clock, 2_000);
      const hung = await turns.acquire();
      let served = false;
      const next = turns.acquire().then((giveBack) => {
        served = true;
        return giveBack;
      });
      await clock.advance(1_999);
      expect(served).toBe(false);
      await clock.advance(1);
      (await next)();
      expect(served).toBe(true);
      hung(); // late: gives nothing back twice
      expect(turns.load).toEqual({ active: 0, waiting: 0 });
    });
  });
});
