/**
 * The rollout report as text: a Markdown table (the default), a plain aligned text table, JSON,
 * and a small SVG chart of the saving per turn per row (bar: the median saving, whisker: its 95%
 * interval, label: the share and the decision), optionally wrapped in HTML with the table.
 * Text, Markdown and HTML carry the same columns (`COLUMNS`, one `cells` function).
 */
import type { Decision, Report, ReportRow } from './model';

const ms = (v: number | undefined): string => (v === undefined ? '—' : Math.abs(v) >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`);
const pct = (v: number | undefined): string => (v === undefined ? '—' : `${(v * 100).toFixed(v !== 0 && Math.abs(v) < 0.1 ? 1 : 0)}%`);

function synthetic(r: ReportRow): string {
  const e = Object.entries(r.synthetic).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return e.length === 0 ? '0' : e.map(([k, n]) => `${k} ${n}`).join(', ');
}

function saved(r: ReportRow): string {
  if (r.savedPerTurnMs === undefined) return 'n/a';
  return `${ms(r.savedPerTurnMs)} (${r.savedKind})`;
}

function interval(r: ReportRow): string {
  const iv = r.savedInterval;
  return iv === undefined ? '—' : `${ms(iv.low)} to ${ms(iv.high)}`;
}

/** The columns of every table form, in order. */
export const COLUMNS = [
  'kind',
  'format',
  'model',
  'turns',
  'retried',
  'aborted',
  'failed',
  'truncated',
  'calls',
  'early',
  'head start p50',
  'p90',
  'saved/turn',
  'share',
  '95% interval',
  'synthetic',
  'violations',
  'decision',
  'reason',
] as const;

/** Left-aligned columns (the rest are numbers). */
const TEXT_COLUMNS = new Set<string>(['kind', 'format', 'model', 'synthetic', 'decision', 'reason']);

export function cells(r: ReportRow): string[] {
  return [
    r.kind,
    r.format,
    r.model,
    String(r.turns),
    String(r.retried),
    String(r.aborted),
    String(r.failed),
    String(r.truncated),
    String(r.calls),
    pct(r.earlyShare),
    ms(r.headStartP50Ms),
    ms(r.headStartP90Ms),
    saved(r),
    pct(r.savedShare),
    interval(r),
    synthetic(r),
    String(r.violations),
    r.decision,
    r.reason,
  ];
}

function footer(rep: Report): string {
  const t = rep.totals;
  const th = rep.thresholds;
  const bar = `Decisions: enable needs ≥ ${th.minTurns} turns, a median saving ≥ ${th.minSavingMs} ms and ≥ ${pct(th.minShare)} of the turn, a 95% interval above 0, and 0 violations.`;
  const go = rep.go
    ? `GO: 0 invariant violations in ${t.turns} turns, ${t.calls} calls (${t.inputs} input file${t.inputs === 1 ? '' : 's'}).`
    : `NO-GO: ${t.violations} invariant violation${t.violations === 1 ? '' : 's'} in ${t.turns} turns — keep early dispatch off and report them.`;
  return `${bar}\n${go}`;
}

/** Markdown: one row per kind, provider format and model, then the thresholds and the go/no-go line. */
export function renderMarkdown(rep: Report): string {
  const lines = [`| ${COLUMNS.join(' | ')} |`, `|${COLUMNS.map((h) => (TEXT_COLUMNS.has(h) ? '---' : '--:')).join('|')}|`];
  for (const r of rep.rows) lines.push(`| ${cells(r).map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`);
  lines.push('', footer(rep));
  return lines.join('\n') + '\n';
}

/** Plain text: the same columns, aligned with spaces. */
export function renderText(rep: Report): string {
  const table = [[...COLUMNS] as string[], ...rep.rows.map(cells)];
  const widths = COLUMNS.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  const line = (row: string[]): string =>
    row
      .map((c, i) => (i === row.length - 1 ? c : TEXT_COLUMNS.has(COLUMNS[i]!) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(table[0]!), ...table.slice(1).map(line), '', footer(rep)].join('\n') + '\n';
}

export function renderJson(rep: Report): string {
  return JSON.stringify(rep, null, 2) + '\n';
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const COLOR: Record<Decision, string> = { enable: '#2e7d32', 'keep-off': '#757575', 'more-data': '#f9a825', 'no-go': '#c62828' };

/** A horizontal bar per row: the median saving per turn, its 95% interval as a whisker, share and decision as the label. */
export function renderSvg(rep: Report): string {
  const rows = rep.rows;
  const labelW = 300;
  const plotW = 420;
  const rowH = 26;
  const top = 34;
  const h = top + Math.max(1, rows.length) * rowH + 34;
  const w = labelW + plotW + 260;
  const values = rows.flatMap((r) => [r.savedPerTurnMs ?? 0, r.savedInterval?.low ?? 0, r.savedInterval?.high ?? 0]);
  const max = Math.max(1, ...values);
  const min = Math.min(0, ...values);
  const x = (v: number): number => labelW + ((v - min) / (max - min)) * plotW;
  const zero = x(0);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="sans-serif" font-size="12">`,
    `<title>sluice rollout report: time saved per turn per provider format and model</title>`,
    `<text x="8" y="20" font-size="14" font-weight="bold">Time saved per turn by early dispatch (bar: median, line: 95% interval; share of the turn)</text>`,
  ];
  rows.forEach((r, i) => {
    const y = top + i * rowH;
    parts.push(`<text x="${labelW - 8}" y="${y + 16}" text-anchor="end">${esc(`${r.kind} · ${r.format} · ${r.model}`)}</text>`);
    const label = `${r.decision}: ${r.savedPerTurnMs === undefined ? 'no saving measured' : `${ms(r.savedPerTurnMs)} (${pct(r.savedShare)})`}`;
    if (r.savedPerTurnMs !== undefined) {
      const v = r.savedPerTurnMs;
      const x0 = Math.min(zero, x(v));
      parts.push(
        `<rect x="${x0.toFixed(1)}" y="${y + 4}" width="${Math.max(1, Math.abs(x(v) - zero)).toFixed(1)}" height="${rowH - 10}" fill="${COLOR[r.decision]}"><title>${esc(`${r.format} ${r.model}: ${r.reason}`)}</title></rect>`,
      );
      const iv = r.savedInterval;
      if (iv)
        parts.push(
          `<line x1="${x(iv.low).toFixed(1)}" y1="${y + rowH / 2}" x2="${x(iv.high).toFixed(1)}" y2="${y + rowH / 2}" stroke="#333"/>`,
          `<line x1="${x(iv.low).toFixed(1)}" y1="${y + 7}" x2="${x(iv.low).toFixed(1)}" y2="${y + rowH - 7}" stroke="#333"/>`,
          `<line x1="${x(iv.high).toFixed(1)}" y1="${y + 7}" x2="${x(iv.high).toFixed(1)}" y2="${y + rowH - 7}" stroke="#333"/>`,
        );
    }
    parts.push(`<text x="${labelW + plotW + 10}" y="${y + 16}" fill="${COLOR[r.decision]}">${esc(label)}</text>`);
  });
  const axisY = top + Math.max(1, rows.length) * rowH + 8;
  parts.push(
    `<line x1="${labelW}" y1="${axisY}" x2="${labelW + plotW}" y2="${axisY}" stroke="#999"/>`,
    `<line x1="${zero.toFixed(1)}" y1="${top}" x2="${zero.toFixed(1)}" y2="${axisY}" stroke="#999"/>`,
    `<text x="${labelW}" y="${axisY + 16}">${esc(ms(min))}</text>`,
    `<text x="${labelW + plotW}" y="${axisY + 16}" text-anchor="end">${esc(ms(max))}</text>`,
  );
  if (rows.length === 0) parts.push(`<text x="${labelW}" y="${top + 16}">no turns</text>`);
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

/** The chart and the table (same columns as the text forms) in one self-contained page. */
export function renderHtml(rep: Report): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>sluice rollout report</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right;white-space:nowrap}td:last-child{white-space:normal;min-width:22em}td:nth-child(-n+3),th,td:nth-last-child(-n+2){text-align:left}${(Object.entries(COLOR) as [Decision, string][]).map(([d, c]) => `.d-${d} td:nth-last-child(2){color:${c};font-weight:bold}`).join('')}</style>
</head><body>
<h1>sluice rollout report</h1>
${renderSvg(rep)}
<table><tr>${COLUMNS.map((h) => `<th>${esc(h)}</th>`).join('')}</tr>
${rep.rows.map((r) => `<tr class="d-${r.decision}">${cells(r).map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`).join('\n')}
</table>
${footer(rep)
  .split('\n')
  .map((l) => `<p>${esc(l)}</p>`)
  .join('\n')}
</body></html>
`;
}
