import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { renderTimelineHtml, renderTimelineSvg, timelineFromReport, writeTimeline } from '../../src/cli/timeline';
import { replayTrace } from '../../src/trace/replay';
import { parseTrace } from '../../src/trace/trace';

const EXAMPLE = path.join(__dirname, '..', '..', 'examples', 'coding-turn.anthropic.trace.jsonl');

async function reports() {
  const trace = parseTrace(fs.readFileSync(EXAMPLE, 'utf8'));
  const streaming = await replayTrace(trace);
  const post = await replayTrace(trace, { dispatch: 'post-stream' });
  return { streaming, post };
}

/** x of the run bar (<rect … rx="2">) of each call row, by its tooltip title. */
function barStarts(svg: string): number[] {
  return [...svg.matchAll(/<g><title>[^<]*<\/title>(?:(?!<\/g>)[\s\S])*?<rect x="([\d.]+)" y="[\d.]+" width="[\d.]+" height="14" rx="2"/g)].map((m) => Number(m[1]));
}

describe('timeline pictures', () => {
  it('draws streaming and post-stream runs of the coding turn as a standalone SVG', async () => {
    const { streaming, post } = await reports();
    const svg = renderTimelineSvg(timelineFromReport(streaming, post));
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg).not.toMatch(/<script|href=/); // standalone: no scripts, no external resources
    expect(svg).toContain('streaming dispatch');
    expect(svg).toContain('post-stream dispatch');
    expect(svg).toContain('turn done 6.50 s');
    expect(svg).toContain('turn done 8.50 s');
    expect(svg).toContain('ideal 6.50 s');
    // One tool bar per call and run: in the streaming run the reads start earlier than post-stream.
    const starts = barStarts(svg);
    expect(starts).toHaveLength(8);
    expect(starts[0]!).toBeLessThan(starts[4]!);
    expect(starts[1]!).toBeLessThan(starts[5]!);
    // Never argument contents.
    expect(svg).not.toContain('parseConfig');
    expect(svg).not.toContain('src/app.ts');
  });

  it('legend and drawing agree: each swatch is drawn the way its mark is in the chart', async () => {
    const { streaming, post } = await reports();
    const svg = renderTimelineSvg(timelineFromReport(streaming, post));
    const legendEnd = svg.indexOf('call complete');
    const legend = svg.slice(0, legendEnd);
    const chart = svg.slice(legendEnd);
    // "waiting": a dotted line in both, never a filled box.
    const wait = /<line [^>]*stroke="(#[0-9a-f]+)" stroke-width="2" stroke-dasharray="3 3"\/>/;
    const waitColor = wait.exec(legend)?.[1];
    expect(waitColor).toBeDefined();
    expect(legend).not.toContain(`fill="${waitColor}"`);
    expect(chart).toMatch(new RegExp(`<line [^>]*stroke="${waitColor}" stroke-width="2" stroke-dasharray="3 3"/>`));
    // Every box swatch's colour fills something in the chart, except the error one (no errors in this turn).
    const boxes = [...legend.matchAll(/<rect [^>]*rx="2" fill="(#[0-9a-f]+)"\/>/g)].map((m) => m[1]!);
    expect(boxes).toHaveLength(5);
    const unused = boxes.filter((c) => !chart.includes(`fill="${c}"`));
    expect(unused).toEqual(['#e45756']);
  });

  it('is deterministic and well-formed (balanced tags)', async () => {
    const { streaming, post } = await reports();
    const a = renderTimelineSvg(timelineFromReport(streaming, post));
    const b = renderTimelineSvg(timelineFromReport(streaming, post));
    expect(a).toBe(b);
    const open = (a.match(/<g>/g) ?? []).length;
    const close = (a.match(/<\/g>/g) ?? []).length;
    expect(open).toBe(close);
    expect((a.match(/<text/g) ?? []).length).toBe((a.match(/<\/text>/g) ?? []).length);
  });

  it('escapes names and writes .svg and .html files', async () => {
    const { streaming, post } = await reports();
    streaming.calls[0]!.name = '<b>&x';
    const html = renderTimelineHtml(timelineFromReport(streaming, post));
    expect(html).toContain('&lt;b&gt;&amp;x');
    expect(html).not.toContain('<b>&x');
    expect(html).toMatch(/<table>[\s\S]*<td>read_file<\/td>/);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-tl-'));
    try {
      writeTimeline(path.join(dir, 't.svg'), streaming, post);
      writeTimeline(path.join(dir, 't.html'), streaming, post);
      expect(fs.readFileSync(path.join(dir, 't.svg'), 'utf8')).toMatch(/^<svg/);
      expect(fs.readFileSync(path.join(dir, 't.html'), 'utf8')).toMatch(/^<!doctype html>/);
      expect(() => writeTimeline(path.join(dir, 't.png'), streaming)).toThrow(/\.svg or \.html/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
