/**
 * The rollout report as text: a Markdown table (the default), JSON, and a small SVG chart of the
 * head start per provider format and model (p50 bar, p90 whisker), optionally wrapped in HTML.
 */
import type { Report, ReportRow } from './model';

const ms = (v: number | undefined): string => (v === undefined ? '—' : v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`);
const pct = (v: number | undefined): string => (v === undefined ? '—' : `${Math.round(v * 100)}%`);

function synthetic(r: ReportRow): string {
  const e = Object.entries(r.synthetic).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return e.length === 0 ? '0' : e.map(([k, n]) => `${k} ${n}`).join(', ');
}

function saved(r: ReportRow): string {
  if (r.savedKind === 'n/a' || r.savedPerTurnMs === undefined) return 'n/a';
  return `${ms(r.savedPerTurnMs)}/turn (${r.savedKind})`;
}

/** Markdown: one row per provider format and model, then the go/no-go line. */
export function renderMarkdown(rep: Report): string {
  const head = ['format', 'model', 'turns', 'retried', 'aborted', 'failed', 'calls', 'early', 'head start p50', 'p90', 'time saved', 'synthetic', 'violations'];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((h, i) => (i < 2 || h === 'synthetic' ? '---' : '--:')).join('|')}|`];
  for (const r of rep.rows)
    lines.push(
      `| ${[
        r.format,
        r.model.replace(/\|/g, '\\|'),
        String(r.turns),
        String(r.retried),
        String(r.aborted),
        String(r.failed),
        String(r.calls),
        pct(r.earlyShare),
        ms(r.headStartP50Ms),
        ms(r.headStartP90Ms),
        saved(r),
        synthetic(r),
        String(r.violations),
      ].join(' | ')} |`,
    );
  const t = rep.totals;
  lines.push('');
  lines.push(
    rep.go
      ? `GO: 0 invariant violations in ${t.turns} turns, ${t.calls} calls (${t.inputs} input file${t.inputs === 1 ? '' : 's'}).`
      : `NO-GO: ${t.violations} invariant violation${t.violations === 1 ? '' : 's'} in ${t.turns} turns — keep early dispatch off and report them.`,
  );
  return lines.join('\n') + '\n';
}

export function renderJson(rep: Report): string {
  return JSON.stringify(rep, null, 2) + '\n';
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A horizontal bar per row: p50 head start as the bar, p90 as a whisker; rows without calls are left out. */
export function renderSvg(rep: Report): string {
  const rows = rep.rows.filter((r) => r.headStartP50Ms !== undefined);
  const labelW = 260;
  const plotW = 420;
  const rowH = 26;
  const top = 34;
  const h = top + Math.max(1, rows.length) * rowH + 34;
  const w = labelW + plotW + 90;
  const max = Math.max(1, ...rows.map((r) => r.headStartP90Ms ?? r.headStartP50Ms ?? 0));
  const x = (v: number): number => labelW + (v / max) * plotW;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="sans-serif" font-size="12">`,
    `<title>sluice rollout report: head start per provider format and model</title>`,
    `<text x="8" y="20" font-size="14" font-weight="bold">Head start before the end of the stream (bar p50, line p90)</text>`,
  ];
  rows.forEach((r, i) => {
    const y = top + i * rowH;
    const p50 = r.headStartP50Ms ?? 0;
    const p90 = r.headStartP90Ms ?? p50;
    parts.push(
      `<text x="${labelW - 8}" y="${y + 16}" text-anchor="end">${esc(`${r.format} · ${r.model}`)}</text>`,
      `<rect x="${labelW}" y="${y + 4}" width="${Math.max(1, x(p50) - labelW).toFixed(1)}" height="${rowH - 10}" fill="${r.violations > 0 ? '#c62828' : '#2e7d32'}"><title>${esc(`${r.format} ${r.model}: p50 ${ms(p50)}, p90 ${ms(p90)}, ${r.calls} calls, ${pct(r.earlyShare)} early`)}</title></rect>`,
      `<line x1="${x(p50).toFixed(1)}" y1="${y + rowH / 2}" x2="${x(p90).toFixed(1)}" y2="${y + rowH / 2}" stroke="#333"/>`,
      `<line x1="${x(p90).toFixed(1)}" y1="${y + 6}" x2="${x(p90).toFixed(1)}" y2="${y + rowH - 6}" stroke="#333"/>`,
      `<text x="${(x(p90) + 6).toFixed(1)}" y="${y + 16}">${esc(ms(p50))} / ${esc(ms(p90))}</text>`,
    );
  });
  const axisY = top + Math.max(1, rows.length) * rowH + 8;
  parts.push(
    `<line x1="${labelW}" y1="${axisY}" x2="${labelW + plotW}" y2="${axisY}" stroke="#999"/>`,
    `<text x="${labelW}" y="${axisY + 16}">0</text>`,
    `<text x="${labelW + plotW}" y="${axisY + 16}" text-anchor="end">${esc(ms(max))}</text>`,
  );
  if (rows.length === 0) parts.push(`<text x="${labelW}" y="${top + 16}">no timed calls</text>`);
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

/** The chart and the table in one self-contained page. */
export function renderHtml(rep: Report): string {
  const cells = (r: ReportRow): string[] => [
    r.format,
    r.model,
    String(r.turns),
    String(r.calls),
    pct(r.earlyShare),
    ms(r.headStartP50Ms),
    ms(r.headStartP90Ms),
    saved(r),
    synthetic(r),
    String(r.violations),
  ];
  const head = ['format', 'model', 'turns', 'calls', 'early', 'head start p50', 'p90', 'time saved', 'synthetic', 'violations'];
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>sluice rollout report</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}td:nth-child(-n+2),th{text-align:left}</style>
</head><body>
<h1>sluice rollout report</h1>
${renderSvg(rep)}
<table><tr>${head.map((h) => `<th>${h}</th>`).join('')}</tr>
${rep.rows.map((r) => `<tr>${cells(r).map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`).join('\n')}
</table>
<p><strong>${rep.go ? 'GO' : 'NO-GO'}</strong>: ${rep.totals.violations} invariant violations in ${rep.totals.turns} turns.</p>
</body></html>
`;
}
