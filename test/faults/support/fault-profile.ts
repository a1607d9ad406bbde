import { randomInt } from 'node:crypto';

/** The faults a run injects while the load runs. */
export type FaultKind = 'post-kill' | 'subscribe-kill' | 'broker-outage' | 'database-restart';

/** How big a fault run is: the short form (`npm test`) or the soak (`npm run test:faults -- --soak`). */
export interface FaultProfile {
  readonly name: 'short' | 'soak';
  /** Authors writing posts side by side; each writes one post at a time. */
  readonly authors: number;
  /** Subscribers of each author: one follows every author, the others one author each. */
  readonly subscribersPerAuthor: number;
  /** Posts per second offered, over all authors. */
  readonly postsPerSecond: number;
  /** How long the load runs at least (longer if a fault is still recovering then). */
  readonly loadMs: number;
  /** How many faults of each kind are injected, at seeded-random moments. */
  readonly faults: Readonly<Record<FaultKind, number>>;
  /** How long to wait for quiescence after the load. */
  readonly quiescenceTimeoutMs: number;
  /** The seed of every random choice (moments, targets, outage lengths); `FAULTS_SEED` replays a run. */
  readonly seed: number;
}

const SHORT = {
  name: 'short',
  authors: 3,
  subscribersPerAuthor: 4,
  postsPerSecond: 3,
  loadMs: 75_000,
  faults: { 'post-kill': 2, 'subscribe-kill': 1, 'broker-outage': 1, 'database-restart': 1 },
  quiescenceTimeoutMs: 180_000,
} as const;

const SOAK = {
  name: 'soak',
  authors: 4,
  subscribersPerAuthor: 4,
  postsPerSecond: 5,
  loadMs: 600_000,
  faults: { 'post-kill': 12, 'subscribe-kill': 6, 'broker-outage': 5, 'database-restart': 3 },
  quiescenceTimeoutMs: 300_000,
} as const;

/**
 * The profile this run uses: the soak with `FAULTS_SOAK=1` (set by `npm run test:faults -- --soak`), whose
 * length `FAULTS_SOAK_MINUTES` may change (default 10); otherwise the short form. The seed is
 * `FAULTS_SEED` when given, else a new one (printed, so that a failing run can be replayed).
 */
export function faultProfile(env: NodeJS.ProcessEnv = process.env): FaultProfile {
  const seedText = env.FAULTS_SEED?.trim();
  const seed = seedText ? Number.parseInt(seedText, 10) : randomInt(1, 2 ** 31 - 1);
  if (!Number.isSafeInteger(seed)) throw new Error(`FAULTS_SEED must be an integer, got '${seedText}'.`);
  if (env.FAULTS_SOAK !== '1' && env.FAULTS_SOAK !== 'true') return { ...SHORT, seed };
  const minutes = Number(env.FAULTS_SOAK_MINUTES ?? 10);
  if (!(minutes > 0)) throw new Error(`FAULTS_SOAK_MINUTES must be a positive number of minutes.`);
  const scale = minutes / 10;
  const faults = Object.fromEntries(
    Object.entries(SOAK.faults).map(([kind, n]) => [kind, Math.max(1, Math.round(n * scale))]),
  ) as Record<FaultKind, number>;
  return { ...SOAK, loadMs: Math.round(minutes * 60_000), faults, seed };
}

/** True when this run is a soak. */
export function isSoak(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.FAULTS_SOAK === '1' || env.FAULTS_SOAK === 'true';
}

/** A small seeded generator (mulberry32): the same seed gives the same fault schedule. */
export class SeededRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** Uniform integer in [min, max]. */
  between(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out;
  }
}
