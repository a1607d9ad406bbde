import { parseProcStat, ProcessCpuMeter, readProcStat } from './process-cpu';

describe('parseProcStat', () => {
  it('reads pid, command, parent and CPU ticks, also when the command holds spaces and parentheses', () => {
    const line =
      '4242 (postgres: 15/main: x (y) z) S 2206 4242 4242 0 -1 4194560 1234 0 0 0 731 205 0 0 20 0 1 0 98765 ' +
      '226906112 3741 18446744073709551615 1 1 0 0 0 0 4194304 19935232 84487 0 0 0 17 1 0 0 0 0 0\n';
    expect(parseProcStat(line)).toEqual({
      pid: 4242,
      comm: 'postgres: 15/main: x (y) z',
      ppid: 2206,
      utimeTicks: 731,
      stimeTicks: 205,
    });
  });

  it('refuses a line that is not one', () => {
    expect(() => parseProcStat('not a stat line')).toThrow(/Not a \/proc/);
    expect(() => parseProcStat('12 (x) S')).toThrow(/Not a \/proc/);
  });

  const linux = process.platform === 'linux' ? it : it.skip;

  linux("reads this process's own line and counts the CPU it spends", async () => {
    const own = readProcStat(process.pid);
    expect(own?.pid).toBe(process.pid);
    expect(own?.ppid).toBe(process.ppid);
    const meter = await ProcessCpuMeter.start([{ name: 'self', pids: () => [process.pid] }]);
    const started = process.cpuUsage();
    const spentMs = () => {
      const { user, system } = process.cpuUsage(started);
      return (user + system) / 1000;
    };
    while (spentMs() < 200); // busy until this process used 200 ms of CPU (however loaded the machine)
    const use = await meter.stop();
    const spent = spentMs();
    // One tick (10 ms) of resolution at each end, and a little for what ran around the loop.
    expect(use.self).toBeGreaterThanOrEqual(spent - 40);
    expect(use.self).toBeLessThanOrEqual(spent + 40);
  });
});
