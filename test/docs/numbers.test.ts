/**
 * Numbers the docs state that a command can produce, measured here so they cannot drift:
 *
 * - README.md and docs/embedding.md: the minified bundle of a program importing only `runTurn`
 *   (esbuild with code splitting, and Vite), entry chunk plus its static chunks, within 10% of the
 *   stated size (sizes do not depend on the machine; the margin covers ordinary code changes, not
 *   a stale figure);
 * - docs/embedding.md: how many files of sluice's own build `require('sluice')` loads (±2: the
 *   number of shared chunks moves with the code), how many of xstate's (exact) and which Node
 *   builtins (exact);
 * - docs/embedding.md: what `require('sluice')` adds to a bare node start, and xstate's part of it,
 *   in CPU time of fresh processes (median of 7, interleaved): generous ranges (a quarter to four
 *   times the stated figures) so a loaded 2-core CI passes, while "most of it is xstate" would not.
 *
 * Against the build in dist/ (`npm ci` builds it; `npm run build` after changing src/).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bundle, coldStart, loadedModules, project, PROBE, ROOT, viteBundle } from '../../bench/package';

// Line breaks in the Markdown source are spaces to the reader (and to the patterns below).
const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').replace(/\s+/g, ' ');
const embedding = fs.readFileSync(path.join(ROOT, 'docs/embedding.md'), 'utf8').replace(/\s+/g, ' ');
const built = fs.existsSync(path.join(ROOT, 'dist/esm/index.mjs')) && fs.existsSync(path.join(ROOT, 'dist/cjs/index.cjs'));

const WORDS: Record<string, number> = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12 };

/** The first capture of `re` in `text`, or a failure naming what the doc no longer says. */
function stated(text: string, re: RegExp, what: string): string {
  const m = re.exec(text);
  if (!m) throw new Error(`the doc no longer states ${what} (${re.source}): update test/docs/numbers.test.ts with it`);
  return m[1]!;
}

const count = (s: string): number => WORDS[s.toLowerCase()] ?? Number(s);

(built ? describe : describe.skip)('numbers in README.md and docs/embedding.md', () => {
  let dir: string;
  beforeAll(() => {
    dir = project();
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('the runTurn-only bundle size (README, embedding.md) is within 10% of esbuild and Vite builds', async () => {
    const readmeKb = Number(stated(readme, /importing only `runTurn` bundles to about (\d+) KB/, 'the runTurn bundle size'));
    const embeddingKb = Number(stated(embedding, /entry chunk of about (\d+) KB/, 'the runTurn bundle size'));
    expect(embeddingKb).toBe(readmeKb);
    const es = await bundle(dir);
    const vite = viteBundle(dir);
    if ('error' in vite) throw new Error(`vite: ${vite.error}`);
    for (const b of [es, vite]) {
      const kb = (b.entryBytes + b.staticBytes) / 1024;
      if (kb < readmeKb * 0.9 || kb > readmeKb * 1.1) throw new Error(`${b.bundler}: ${kb.toFixed(1)} KB, the docs say about ${readmeKb} KB`);
    }
  }, 120_000);

  test("what require('sluice') loads (embedding.md): its files, xstate's and Node's builtins", () => {
    const own = count(stated(embedding, /`require\('sluice'\)` loads (\w+) files of its own build/, "the number of sluice's files"));
    const xs = count(stated(embedding, /`xstate` \((\w+) files\)/, "the number of xstate's files"));
    const builtinText = stated(embedding, /of Node's builtins only ((?:`[a-z:]+`(?:, | and )?)+)/, 'the builtins loaded');
    const builtins = [...builtinText.matchAll(/`(?:node:)?([a-z]+)`/g)].map((m) => m[1]!).sort();
    const m = loadedModules(dir);
    expect(Math.abs(m.sluiceFiles.length - own)).toBeLessThanOrEqual(2);
    expect(m.packages.xstate).toBe(xs);
    expect(m.builtins).toEqual(builtins);
    // Nothing else is loaded: no OpenTelemetry, no shell parser, no zod.
    expect(Object.keys(m.packages).sort()).toEqual(['mitt', 'xstate']);
  });

  test("the load time (embedding.md): require('sluice') and xstate's part, in CPU ms, within generous ranges", () => {
    const total = Number(stated(embedding, /`require\('sluice'\)` adds about (\d+) ms of CPU time/, 'the load time'));
    const xs = Number(stated(embedding, /xstate about (\d+) ms of it/, "xstate's part of the load time"));
    const xstatePath = require.resolve('xstate', { paths: [ROOT] });
    const [sluice, xstate] = coldStart(dir, 7, [
      ['bare node', ['-e', PROBE]],
      ["require('sluice')", ['-e', `require('sluice'); ${PROBE}`]],
      ['xstate', ['-e', `require(${JSON.stringify(xstatePath)}); ${PROBE}`]],
    ]);
    expect(sluice!.addedCpuMs).toBeGreaterThanOrEqual(total / 4);
    expect(sluice!.addedCpuMs).toBeLessThanOrEqual(total * 4);
    expect(xstate!.addedCpuMs).toBeLessThanOrEqual(xs * 4);
    // The docs say xstate is a minority of the cost; most of it would read differently.
    expect(xstate!.addedCpuMs).toBeLessThan(sluice!.addedCpuMs * 0.6);
  }, 120_000);
});

if (!built) {
  test.skip('numbers in README.md and docs/embedding.md: no build in dist/ (npm run build)', () => undefined);
}
