import { SAFE_KINDS } from '../execute/safety';
import * as fs from 'node:fs';
import type { LiveTurn } from '../demo/run';
import type { ReplayReport } from '../trace/replay';
import { UsageError } from './args';

/**
 * Timeline pictures (Gantt charts) of a turn: the model stream, and for each call when its
 * arguments streamed, when it became complete, when it was released, and when its tool ran —
 * under streaming dispatch and, below it, the same turn under post-stream dispatch.
 *
 * `.svg` is a standalone image (no scripts, no external fonts: opens in any browser or image
 * viewer); `.html` is the same SVG in a page with a table of the exact times. Output is
 * deterministic for a given report. Never shows argument or result contents.
 */

export interface TimelineCall {
  index: number;
  attempt: number;
  name?: string;
  kind?: string;
  state: string;
  /** When the call's first wire event arrived (arguments start streaming), if known. */
  openMs?: number;
  completeMs?: number;
  releasedMs?: number;
  startedMs?: number;
  resultMs?: number;
  ok?: boolean;
}

export interface TimelineRun {
  label: string;
  dispatch: string;
  streamEndMs?: number;
  turnDoneMs: number;
  calls: TimelineCall[];
}

export interface TimelineChart {
  title: string;
  subtitle?: string;
  runs: TimelineRun[];
  idealMs?: number;
}


function runFromReport(r: ReplayReport): TimelineRun {
  return {
    label: r.dispatch === 'post-stream' ? 'post-stream dispatch' : 'streaming dispatch',
    dispatch: r.dispatch,
    streamEndMs: r.streamEndMs,
    turnDoneMs: r.turnDoneMs,
    calls: r.calls.map((c) => ({
      index: c.index,
      attempt: c.attempt,
      name: c.name,
      kind: c.kind,
      state: c.state,
      openMs: c.openMs,
      completeMs: c.completeMs,
      releasedMs: c.releasedMs,
      startedMs: c.startedMs,
      resultMs: c.resultMs,
      ...(c.result ? { ok: c.result.ok } : {}),
    })),
  };
}

/** A chart from a replay report (and, if given, the same trace replayed under post-stream dispatch). */
export function timelineFromReport(
  report: ReplayReport,
  post?: ReplayReport,
  title = 'sluice replay',
): TimelineChart {
  const runs = [runFromReport(report)];
  if (post && post !== report) runs.push(runFromReport(post));
  const saved =
    report.savedMs !== undefined && report.postStreamMs
      ? ` · saved ${fmt(report.savedMs)} (${((100 * report.savedMs) / report.postStreamMs).toFixed(0)}%)`
      : '';
  return {
    title,
    subtitle: `${report.format} · completion ${report.completion} · outcome ${report.outcome}${saved}`,
    runs,
    idealMs: report.idealMs,
  };
}

/** A chart from the demo's two live runs. */
export function timelineFromDemo(turns: LiveTurn[]): TimelineChart {
  const runs: TimelineRun[] = turns.map((t) => ({
    label: t.dispatch === 'post-stream' ? 'post-stream dispatch' : 'streaming dispatch',
    dispatch: t.dispatch,
    streamEndMs: t.streamEndMs,
    turnDoneMs: t.turnDoneMs ?? t.now(),
    calls: t.calls.map((c) => ({
      index: c.index,
      attempt: c.attempt,
      name: c.name,
      kind: c.kind,
      state: c.phase,
      openMs: c.openMs,
      completeMs: c.completeMs,
      releasedMs: c.releasedMs,
      startedMs: c.startedMs,
      resultMs: c.resultMs,
      ok: c.ok,
    })),
  }));
  const a = runs[0];
  const b = runs[1];
  const saved =
    a && b
      ? ` · saved ${fmt(b.turnDoneMs - a.turnDoneMs)} (${((100 * (b.turnDoneMs - a.turnDoneMs)) / b.turnDoneMs).toFixed(0)}%)`
      : '';
  return {
    title: 'sluice demo',
    subtitle: `scripted model over HTTP, real tools (wall-clock times)${saved}`,
    runs,
  };
}

function fmt(ms: number): string {
  return Math.abs(ms) >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`;
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const n = (v: number): string => (Math.round(v * 10) / 10).toString();

/** Tick step (ms) giving at most ~12 ticks. */
function tickStep(maxMs: number): number {
  for (const s of [
    1, 2, 5, 10, 20, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10_000, 30_000, 60_000, 300_000,
  ])
    if (maxMs / s <= 12) return s;
  return 600_000;
}

const COLORS = {
  stream: '#4c78a8',
  args: '#9ecae9',
  wait: '#bbbbbb',
  safe: '#54a24b',
  unsafe: '#f58518',
  error: '#e45756',
  discarded: '#cccccc',
  text: '#222222',
  muted: '#666666',
  grid: '#e6e6e6',
};

/** The standalone SVG. */
export function renderTimelineSvg(chart: TimelineChart): string {
  const W = 1000;
  const left = 190;
  const right = 40;
  const plotW = W - left - right;
  const rowH = 22;
  const maxMs = Math.max(
    1,
    ...chart.runs.map((r) =>
      Math.max(
        r.turnDoneMs,
        r.streamEndMs ?? 0,
        ...r.calls.map((c) => c.resultMs ?? c.startedMs ?? c.completeMs ?? 0),
      ),
    ),
    chart.idealMs ?? 0,
  );
  const span = maxMs * 1.06;
  const x = (ms: number): number => left + (Math.max(0, ms) / span) * plotW;
  const parts: string[] = [];
  let y = 0;

  // Title and legend.
  parts.push(
    `<text x="20" y="28" font-size="18" font-weight="600" fill="${COLORS.text}">${esc(chart.title)}</text>`,
  );
  if (chart.subtitle)
    parts.push(`<text x="20" y="48" font-size="12" fill="${COLORS.muted}">${esc(chart.subtitle)}</text>`);
  y = 62;
  // Each swatch is drawn as its mark is in the chart: bars as boxes, the wait as the dotted line.
  const legendItems: [string, string, 'bar' | 'dotted'][] = [
    [COLORS.stream, 'model stream', 'bar'],
    [COLORS.args, 'arguments streaming', 'bar'],
    [COLORS.wait, 'complete, waiting to start', 'dotted'],
    [COLORS.safe, 'read-only tool running', 'bar'],
    [COLORS.unsafe, 'other tool running', 'bar'],
    [COLORS.error, 'error result', 'bar'],
  ];
  let lx = 20;
  for (const [color, label, mark] of legendItems) {
    parts.push(
      mark === 'dotted'
        ? `<line x1="${lx}" y1="${y + 6}" x2="${lx + 12}" y2="${y + 6}" stroke="${color}" stroke-width="2" stroke-dasharray="3 3"/>`
        : `<rect x="${lx}" y="${y}" width="12" height="12" rx="2" fill="${color}"/>`,
    );
    parts.push(
      `<text x="${lx + 16}" y="${y + 10}" font-size="11" fill="${COLORS.text}">${esc(label)}</text>`,
    );
    lx += 24 + label.length * 6.2;
  }
  parts.push(`<path d="M${lx + 4} ${y + 6} l5 -5 l5 5 l-5 5 z" fill="${COLORS.text}"/>`);
  parts.push(`<text x="${lx + 18}" y="${y + 10}" font-size="11" fill="${COLORS.text}">call complete</text>`);
  y += 30;

  // Time axis.
  const step = tickStep(span);
  const axisTop = y;
  const ticks: string[] = [];
  for (let t = 0; t <= span; t += step) {
    ticks.push(
      `<text x="${n(x(t))}" y="${axisTop + 10}" font-size="10" text-anchor="middle" fill="${COLORS.muted}">${esc(step >= 1000 ? `${t / 1000} s` : `${t} ms`)}</text>`,
    );
  }
  parts.push(...ticks);
  y += 18;
  const gridTop = y;

  for (const run of chart.runs) {
    parts.push(
      `<text x="20" y="${y + 16}" font-size="13" font-weight="600" fill="${COLORS.text}">${esc(run.label)}</text>`,
    );
    parts.push(
      `<text x="${left}" y="${y + 16}" font-size="11" fill="${COLORS.muted}">turn done ${esc(fmt(run.turnDoneMs))}${run.streamEndMs !== undefined ? ` · stream ended ${esc(fmt(run.streamEndMs))}` : ''}</text>`,
    );
    y += 24;
    const blockTop = y;

    // The stream row.
    parts.push(`<text x="30" y="${y + 15}" font-size="12" fill="${COLORS.text}">model stream</text>`);
    if (run.streamEndMs !== undefined) {
      parts.push(
        `<rect x="${n(x(0))}" y="${y + 5}" width="${n(Math.max(1, x(run.streamEndMs) - x(0)))}" height="${rowH - 10}" rx="2" fill="${COLORS.stream}"><title>model stream: 0 – ${esc(fmt(run.streamEndMs))}</title></rect>`,
      );
    }
    y += rowH;

    for (const c of run.calls) {
      const discarded = c.state === 'discarded' || c.state === 'suppressed';
      const label = `#${c.index}${c.attempt > 1 ? `/a${c.attempt}` : ''} ${c.name ?? '?'}`;
      parts.push(
        `<text x="30" y="${y + 15}" font-size="12" fill="${discarded ? COLORS.muted : COLORS.text}">${esc(label.slice(0, 26))}</text>`,
      );
      const tip = [
        `${label} (${c.kind ?? 'unknown kind'}) — ${c.state}`,
        c.openMs !== undefined ? `opened ${fmt(c.openMs)}` : '',
        c.completeMs !== undefined ? `complete ${fmt(c.completeMs)}` : '',
        c.releasedMs !== undefined ? `released ${fmt(c.releasedMs)}` : '',
        c.startedMs !== undefined ? `started ${fmt(c.startedMs)}` : '',
        c.resultMs !== undefined ? `result ${fmt(c.resultMs)}${c.ok === false ? ' (error)' : ''}` : '',
      ]
        .filter(Boolean)
        .join(' · ');
      parts.push(`<g><title>${esc(tip)}</title>`);
      if (c.openMs !== undefined && c.completeMs !== undefined && c.completeMs > c.openMs) {
        parts.push(
          `<rect x="${n(x(c.openMs))}" y="${y + 7}" width="${n(x(c.completeMs) - x(c.openMs))}" height="${rowH - 14}" fill="${discarded ? COLORS.discarded : COLORS.args}"/>`,
        );
      }
      const waitEnd = c.startedMs ?? c.resultMs;
      if (c.completeMs !== undefined && waitEnd !== undefined && waitEnd > c.completeMs) {
        parts.push(
          `<line x1="${n(x(c.completeMs))}" y1="${y + rowH / 2}" x2="${n(x(waitEnd))}" y2="${y + rowH / 2}" stroke="${COLORS.wait}" stroke-width="2" stroke-dasharray="3 3"/>`,
        );
      }
      if (c.startedMs !== undefined && c.resultMs !== undefined) {
        const fill = discarded
          ? COLORS.discarded
          : c.ok === false
            ? COLORS.error
            : SAFE_KINDS.has(c.kind ?? '')
              ? COLORS.safe
              : COLORS.unsafe;
        const w = Math.max(1.5, x(c.resultMs) - x(c.startedMs));
        parts.push(
          `<rect x="${n(x(c.startedMs))}" y="${y + 4}" width="${n(w)}" height="${rowH - 8}" rx="2" fill="${fill}"/>`,
        );
        if (w > 46) {
          parts.push(
            `<text x="${n(x(c.startedMs) + w / 2)}" y="${y + 15}" font-size="10" text-anchor="middle" fill="#ffffff">${esc(fmt(c.resultMs - c.startedMs))}</text>`,
          );
        }
      }
      if (c.completeMs !== undefined) {
        const cx = x(c.completeMs);
        const cy = y + rowH / 2;
        parts.push(
          `<path d="M${n(cx)} ${n(cy - 5)} l5 5 l-5 5 l-5 -5 z" fill="${discarded ? COLORS.muted : COLORS.text}"/>`,
        );
      }
      if (
        c.releasedMs !== undefined &&
        c.completeMs !== undefined &&
        c.releasedMs - c.completeMs > span / 400
      ) {
        parts.push(
          `<line x1="${n(x(c.releasedMs))}" y1="${y + 3}" x2="${n(x(c.releasedMs))}" y2="${y + rowH - 3}" stroke="${COLORS.text}" stroke-width="1.5"/>`,
        );
      }
      if (discarded)
        parts.push(
          `<text x="${n(x(c.completeMs ?? 0) + 10)}" y="${y + 15}" font-size="10" fill="${COLORS.muted}">${esc(c.state)}</text>`,
        );
      parts.push('</g>');
      y += rowH;
    }

    // Markers: stream end and turn done.
    const markers: [number | undefined, string, string][] = [
      [run.streamEndMs, 'stream end', COLORS.stream],
      [run.turnDoneMs, 'turn done', COLORS.text],
    ];
    let labelRow = 0;
    for (const [t, label, color] of markers) {
      if (t === undefined) continue;
      const ly = y + 12 + 12 * labelRow++;
      parts.push(
        `<line x1="${n(x(t))}" y1="${blockTop - 2}" x2="${n(x(t))}" y2="${ly - 8}" stroke="${color}" stroke-width="1" stroke-dasharray="4 3"/>`,
      );
      const nearEnd = x(t) > W - right - 90;
      parts.push(
        `<text x="${n(nearEnd ? x(t) - 3 : x(t) + 3)}" y="${ly}" font-size="10"${nearEnd ? ' text-anchor="end"' : ''} fill="${color}">${esc(`${label} ${fmt(t)}`)}</text>`,
      );
    }
    y += 38;
  }

  if (chart.idealMs !== undefined) {
    parts.push(
      `<line x1="${n(x(chart.idealMs))}" y1="${gridTop}" x2="${n(x(chart.idealMs))}" y2="${y - 32}" stroke="${COLORS.safe}" stroke-width="1" stroke-dasharray="1 3"/>`,
    );
    parts.push(
      `<text x="${n(x(chart.idealMs) + 3)}" y="${gridTop + 10}" font-size="10" fill="${COLORS.safe}">${esc(`ideal ${fmt(chart.idealMs)}`)}</text>`,
    );
  }

  // Grid lines behind everything.
  const grid: string[] = [];
  for (let t = 0; t <= span; t += step)
    grid.push(
      `<line x1="${n(x(t))}" y1="${gridTop}" x2="${n(x(t))}" y2="${y - 32}" stroke="${COLORS.grid}" stroke-width="1"/>`,
    );
  const H = y + 10;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif">\n` +
    `<title>${esc(chart.title)}</title>\n` +
    `<rect width="${W}" height="${H}" fill="#ffffff"/>\n` +
    grid.join('\n') +
    '\n' +
    parts.join('\n') +
    '\n</svg>\n'
  );
}

/** The HTML page: the SVG plus a table of exact times. */
export function renderTimelineHtml(chart: TimelineChart): string {
  const rows: string[] = [];
  const cell = (v: number | undefined): string => `<td>${v === undefined ? '—' : esc(fmt(v))}</td>`;
  for (const run of chart.runs) {
    for (const c of run.calls) {
      rows.push(
        `<tr><td>${esc(run.label)}</td><td>#${c.index}${c.attempt > 1 ? `/a${c.attempt}` : ''}</td><td>${esc(c.name ?? '?')}</td><td>${esc(c.kind ?? '')}</td><td>${esc(c.state)}</td>${cell(c.completeMs)}${cell(c.releasedMs)}${cell(c.startedMs)}${cell(c.resultMs)}</tr>`,
      );
    }
    rows.push(
      `<tr class="total"><td>${esc(run.label)}</td><td colspan="4">stream end ${esc(run.streamEndMs === undefined ? '—' : fmt(run.streamEndMs))}</td><td colspan="4">turn done ${esc(fmt(run.turnDoneMs))}</td></tr>`,
    );
  }
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${esc(chart.title)}</title>
<style>
body { font-family: system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 24px; color: #222; }
table { border-collapse: collapse; margin-top: 16px; font-size: 13px; }
th, td { border-bottom: 1px solid #e6e6e6; padding: 4px 10px; text-align: left; }
td:nth-child(n+6) { text-align: right; font-variant-numeric: tabular-nums; }
tr.total td { font-weight: 600; }
</style>
</head>
<body>
${renderTimelineSvg(chart)}
<table>
<thead><tr><th>run</th><th>call</th><th>name</th><th>kind</th><th>state</th><th>complete</th><th>released</th><th>started</th><th>result</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>
</body>
</html>
`;
}

export function writeChart(file: string, chart: TimelineChart): void {
  if (/\.svg$/i.test(file)) fs.writeFileSync(file, renderTimelineSvg(chart));
  else if (/\.html?$/i.test(file)) fs.writeFileSync(file, renderTimelineHtml(chart));
  else throw new UsageError('--timeline must end in .svg or .html');
}

/** Timeline charts (SVG/HTML) of a replay report; `post` is the same trace under post-stream dispatch. */
export function writeTimeline(file: string, report: ReplayReport, post?: ReplayReport): void {
  writeChart(file, timelineFromReport(report, post));
}
