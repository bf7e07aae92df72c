/**
 * docs/benchmarks.md from bench runs (bench/page.ts): a run replaces the sections it measured,
 * keeps the others, puts each section's SPEC §9 targets under it, and writes the README's
 * headline block only between its markers.
 */
import { PAGE_HEAD, PAGE_SECTIONS, type PageInput, type Target, updatePage, updateReadme } from '../../bench/page';
import type { HeadlineResult } from '../../bench/headline';

const fmt = (ts: Target[]) => ts.map((t) => `- ${t.target}: ${t.measured}`).join('\n') + '\n';
const input = (line: string, sections: PageInput['sections'], targets: Target[] = []): PageInput => ({ line, sections, targets, formatTargets: fmt });

describe('updatePage', () => {
  test('a first run on an old page: the head, its sections, a placeholder for the rest', () => {
    const page = updatePage('# Benchmarks\n\nOld notes by hand.\n', input('Command: `a`.', [{ key: 'package', title: 'Package', body: '| x |\n' }]));
    expect(page.startsWith(PAGE_HEAD)).toBe(true);
    expect(page).not.toContain('Old notes by hand');
    expect(page).toContain('<!-- bench:package -->\n## Package\n\nCommand: `a`.\n\n| x |\n<!-- /bench:package -->');
    for (const key of PAGE_SECTIONS) expect(page).toContain(`<!-- bench:${key} -->`);
    expect(page).toContain('Not measured yet: `npm run bench -- --only headline`.');
  });

  test('a later run replaces only what it measured; targets go under their section', () => {
    const first = updatePage('', input('Command: `one`.', [
      { key: 'package', title: 'Package', body: 'P1\n' },
      { key: 'lifecycle', title: 'Lifecycle', body: 'L1\n' },
    ]));
    const target: Target = { area: 'lifecycle', target: 'linear', measured: '× 0.9', met: true };
    const second = updatePage(first, input('Command: `two`.', [{ key: 'lifecycle', title: 'Lifecycle', body: 'L2\n' }], [target]));
    expect(second).toContain('Command: `one`.\n\nP1');
    expect(second).toContain('Command: `two`.\n\nL2\n\nSPEC §9 targets:\n\n- linear: × 0.9');
    expect(second).not.toContain('L1');
    expect(updatePage(second, input('x', []))).toBe(second);
  });
});

describe('updateReadme', () => {
  const headline = { rows: [], turns: [], corpus: { turns: 18, callsPerTurn: {}, tokensP50: 50, tokensMin: 20, tokensMax: 500 }, grep: 'git grep' } as HeadlineResult;
  const run = { headline, command: 'npm run bench -- --only headline', startedAt: '2026-01-02T03:04:05Z', machine: { cpus: 2, cpu: 'CPU', node: 'v20', load1Start: 1 } };

  test('replaces the block between the markers and nothing else', () => {
    const readme = 'before\n<!-- bench:headline -->\nold table\n<!-- /bench:headline -->\nafter\n';
    const out = updateReadme(readme, run);
    expect(out.startsWith('before\n<!-- bench:headline -->\n| provider profile')).toBe(true);
    expect(out).toContain('2026-01-02');
    expect(out).not.toContain('old table');
    expect(out.endsWith('<!-- /bench:headline -->\nafter\n')).toBe(true);
  });

  test('a README without the markers, or a run without the headline, is left as it is', () => {
    expect(updateReadme('no markers\n', run)).toBe('no markers\n');
    const readme = '<!-- bench:headline -->\nold\n<!-- /bench:headline -->\n';
    expect(updateReadme(readme, { ...run, headline: undefined })).toBe(readme);
  });
});
