import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { cacheRoot } from '../../tools/infra/kafka-jars';
import { infraEnv } from '../../tools/infra/env';

/** The Kafka broker's stop-the-world GC pauses in a window, from the GC log `npm run kafka:start` writes. */
export interface BrokerPauses {
  readonly count: number;
  readonly longestMs: number;
  readonly totalMs: number;
}

const PAUSE = /^\[([^\]]+)\]\[[^\]]*\]\[info\s*\]\[gc\s*\] GC\(\d+\) Pause .* ([\d.]+)ms$/;

/**
 * The pauses that ended between `fromMs` and `toMs` (epoch milliseconds) on the first broker of
 * `KAFKA_BROKERS`, or `undefined` when that broker keeps no GC log here (started elsewhere).
 */
export function brokerPauses(fromMs: number, toMs: number): BrokerPauses | undefined {
  const port = infraEnv().kafkaBrokers[0]?.split(':')[1];
  const file = path.join(cacheRoot(), 'brokers', port ?? '', 'gc.log');
  if (!port || !existsSync(file)) return undefined;
  const pauses = [file, `${file}.0`, `${file}.1`]
    .filter((f) => existsSync(f))
    .flatMap((f) => readFileSync(f, 'utf8').split('\n'))
    .map((line) => PAUSE.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ at: Date.parse(m[1]), ms: Number(m[2]) }))
    .filter((p) => p.at >= fromMs && p.at <= toMs);
  return {
    count: pauses.length,
    longestMs: Math.max(0, ...pauses.map((p) => p.ms)),
    totalMs: pauses.reduce((sum, p) => sum + p.ms, 0),
  };
}

/** One line for the results' notes: what the broker's GC did during a measured window. */
export function describePauses(pauses: BrokerPauses | undefined): string {
  if (!pauses) return 'broker GC: no GC log (a broker not started by npm run kafka:start)';
  return pauses.count === 0
    ? 'broker GC: no pause'
    : `broker GC: ${pauses.count} pause(s), longest ${pauses.longestMs.toFixed(1)} ms, ${pauses.totalMs.toFixed(0)} ms in all`;
}
