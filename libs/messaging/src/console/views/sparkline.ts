import type { Trend } from '../trends/overview-trends';
import { html, Html } from './html';

/** A sparkline's size, px. */
const WIDTH = 96;
const HEIGHT = 20;
const PAD = 2;

const fixed = (n: number) => n.toFixed(1);
const shown = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

/** `HH:MM UTC` of a time, ms since the epoch. */
function clockTime(at: number): string {
  return `${new Date(at).toISOString().slice(11, 16)} UTC`;
}

/**
 * A series as a small inline SVG line over its window (time left to right, the whole window wide, over a
 * faint axis; from 0 or its lowest value up to its highest), named by `label` for screen readers and in its
 * tooltip. Every value goes through `html` (escaped); only numbers the function computed make the points.
 */
export function sparkline(trend: Trend, label: string): Html {
  const { samples, from, to } = trend;
  const values = samples.map((s) => s.value);
  const low = Math.min(0, ...values);
  const high = Math.max(...values);
  const x = (at: number) => PAD + ((at - from) / Math.max(to - from, 1)) * (WIDTH - 2 * PAD);
  const y = (v: number) => HEIGHT - PAD - ((v - low) / (high - low || 1)) * (HEIGHT - 2 * PAD);
  const points = samples.map((s) => `${fixed(x(s.at))},${fixed(y(s.value))}`).join(' ');
  const last = samples[samples.length - 1];
  const minutes = Math.round((to - from) / 60_000);
  const summary = `${label}, last ${minutes} min: ${shown(Math.min(...values))} to ${shown(high)}, now ${shown(last.value)}`;
  return html`<svg
    class="spark"
    width="${WIDTH}"
    height="${HEIGHT}"
    viewBox="0 0 ${WIDTH} ${HEIGHT}"
    role="img"
    aria-label="${summary}"
    data-testid="trend"
    data-samples="${samples.length}"
  >
    <title>${summary}</title>
    <line class="axis" x1="${PAD}" y1="${HEIGHT - PAD}" x2="${WIDTH - PAD}" y2="${HEIGHT - PAD}" />
    ${samples.length > 1 ? html`<polyline fill="none" stroke="currentColor" stroke-width="1.5" points="${points}" />` : ''}
    <circle cx="${fixed(x(last.at))}" cy="${fixed(y(last.value))}" r="2" fill="currentColor" />
  </svg>`;
}

/** "growing since HH:MM" when the series rose over its last readings (`growingSince`); nothing otherwise. */
export function growingLine(trend: Trend): Html | '' {
  if (trend.growingSince === undefined) return '';
  const iso = new Date(trend.growingSince).toISOString();
  return html`<span class="growing bad" data-testid="growing"
    >growing since <time datetime="${iso}" title="${iso}">${clockTime(trend.growingSince)}</time></span
  >`;
}

/** One series of a trend cell: a caption, its trend, and whether its growth is trouble (default: yes). */
export interface TrendEntry {
  readonly caption: string;
  readonly trend: Trend | undefined;
  /** A backlog, an age, a lag or a DLQ: its "growing since" is shown. A rate: not. Default: true. */
  readonly growthIsTrouble?: boolean;
}

/**
 * A table cell with the series of one row over the last hour, each captioned, with a sparkline and (when
 * its growth is trouble and it grows) "growing since"; `subject` names the row for screen readers. A series
 * without a reading yet is left out; a row without any shows an empty cell.
 */
export function trendCell(subject: string, entries: readonly TrendEntry[]): Html {
  return html`<td class="trends">
    ${entries.map(({ caption, trend, growthIsTrouble = true }) =>
      trend
        ? html`<span class="trend"
            ><small>${caption}</small> ${sparkline(trend, `${subject}: ${caption}`)}
            ${growthIsTrouble ? growingLine(trend) : ''}</span
          >`
        : '',
    )}
  </td>`;
}
