import { MeanLag } from './mean-lag';

describe(MeanLag.name, () => {
  describe('read', () => {
    it('is the mean over the messages since the last reading', () => {
      const lag = new MeanLag();
      expect(lag.read('g', 10, 100)).toBeUndefined();
      expect(lag.read('g', 40, 110)).toBe(3);
    });

    it('is undefined when nothing was handled since', () => {
      const lag = new MeanLag();
      lag.read('g', 10, 100);
      expect(lag.read('g', 10, 100)).toBeUndefined();
    });

    it('counts from 0 after a restart (the count fell)', () => {
      const lag = new MeanLag();
      lag.read('g', 500, 1000);
      expect(lag.read('g', 8, 4)).toBe(2);
    });
  });
});
