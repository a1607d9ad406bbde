import { randomInt } from 'node:crypto';

/**
 * The faults a run injects while the load runs: processes killed, servers stopped, and (chaos mode) faults
 * of the fault proxies on the services' broker and database links: an answer lost after the other side
 * acted, every connection cut, traffic delayed, a black hole (read, never answered, then cut).
 */
export type FaultKind =
  | 'post-kill'
  | 'subscribe-kill'
  | 'broker-outage'
  | 'database-restart'
  | 'lost-answer'
  | 'link-cut'
  | 'link-delay'
  | 'black-hole';

/** The kinds the fault proxies inject (chaos mode only). */
export const LINK_FAULTS: readonly FaultKind[] = ['lost-answer', 'link-cut', 'link-delay', 'black-hole'];

/**
 * How big a fault run is: the short form (`npm test`), the soak (`npm run test:faults -- --soak`), or chaos
 * mode, short in `npm test` and long with `npm run test:faults -- --chaos`.
 */
export interface FaultProfile {
  readonly name: 'short' | 'soak' | 'chaos-short' | 'chaos';
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

const NO_LINK_FAULTS = { 'lost-answer': 0, 'link-cut': 0, 'link-delay': 0, 'black-hole': 0 } as const;

const SHORT = {
  name: 'short',
  authors: 3,
  subscribersPerAuthor: 4,
  postsPerSecond: 3,
  loadMs: 55_000,
  faults: {
    ...NO_LINK_FAULTS,
    'post-kill': 2,
    'subscribe-kill': 1,
    'broker-outage': 1,
    'database-restart': 1,
  },
  quiescenceTimeoutMs: 180_000,
} as const;

const SOAK = {
  name: 'soak',
  authors: 4,
  subscribersPerAuthor: 4,
  postsPerSecond: 5,
  loadMs: 600_000,
  faults: {
    ...NO_LINK_FAULTS,
    'post-kill': 12,
    'subscribe-kill': 6,
    'broker-outage': 5,
    'database-restart': 3,
  },
  quiescenceTimeoutMs: 300_000,
} as const;

/** Chaos mode in `npm test`: 45 s of load, mostly link faults, one kill. */
const CHAOS_SHORT = {
  name: 'chaos-short',
  authors: 3,
  subscribersPerAuthor: 3,
  postsPerSecond: 3,
  loadMs: 45_000,
  faults: {
    'post-kill': 1,
    'subscribe-kill': 0,
    'broker-outage': 0,
    'database-restart': 0,
    'lost-answer': 3,
    'link-cut': 1,
    'link-delay': 1,
    'black-hole': 1,
  },
  quiescenceTimeoutMs: 180_000,
} as const;

/** Chaos mode's long form, per 10 minutes: link faults mixed with the soak's kills and restarts. */
const CHAOS = {
  name: 'chaos',
  authors: 4,
  subscribersPerAuthor: 4,
  postsPerSecond: 5,
  loadMs: 600_000,
  faults: {
    'post-kill': 5,
    'subscribe-kill': 3,
    'broker-outage': 2,
    'database-restart': 2,
    'lost-answer': 16,
    'link-cut': 8,
    'link-delay': 5,
    'black-hole': 5,
  },
  quiescenceTimeoutMs: 300_000,
} as const;

/**
 * The profile a run uses. Fault runs (`chaos` false): the soak with `FAULTS_SOAK=1` (set by `npm run
 * test:faults -- --soak`), otherwise the short form. Chaos runs: the long form with `FAULTS_CHAOS=1` (set by
 * `npm run test:faults -- --chaos`), otherwise the short one. A long form's length is `FAULTS_SOAK_MINUTES`
 * (default 10; its faults scale with it). The seed is `FAULTS_SEED` when given, else a new one (printed, so
 * that a failing run can be replayed).
 */
export function faultProfile(env: NodeJS.ProcessEnv = process.env, chaos = false): FaultProfile {
  const seedText = env.FAULTS_SEED?.trim();
  const seed = seedText ? Number.parseInt(seedText, 10) : randomInt(1, 2 ** 31 - 1);
  if (!Number.isSafeInteger(seed)) throw new Error(`FAULTS_SEED must be an integer, got '${seedText}'.`);
  const long = chaos ? isChaos(env) : isSoak(env);
  if (!long) return { ...(chaos ? CHAOS_SHORT : SHORT), seed };
  const base = chaos ? CHAOS : SOAK;
  const minutes = Number(env.FAULTS_SOAK_MINUTES ?? 10);
  if (!(minutes > 0)) throw new Error(`FAULTS_SOAK_MINUTES must be a positive number of minutes.`);
  const scale = minutes / 10;
  const faults = Object.fromEntries(
    Object.entries(base.faults).map(([kind, n]) => [kind, n === 0 ? 0 : Math.max(1, Math.round(n * scale))]),
  ) as Record<FaultKind, number>;
  return { ...base, loadMs: Math.round(minutes * 60_000), faults, seed };
}

/** True when this run is a soak. */
export function isSoak(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.FAULTS_SOAK === '1' || env.FAULTS_SOAK === 'true';
}

/** True when this run is chaos mode's long form. */
export function isChaos(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.FAULTS_CHAOS === '1' || env.FAULTS_CHAOS === 'true';
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
