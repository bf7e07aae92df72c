/**
 * The package's weight as users meet it (issue 19), against the build in dist/ (`npm run bench`
 * builds first):
 *
 * - bundle: esbuild (ESM, code splitting, minified, platform node) of a program that imports only
 *   `runTurn` from 'sluice' — the entry chunk's bytes (target ≤ 600 KB), and the lazy chunks
 *   (the shell parser) it may load later; the same program through Vite (SSR build for Node,
 *   everything bundled, minified) for comparison (webpack's terser takes a minute on mvdan-sh, so
 *   it is tested in test/package, not measured here);
 * - cold start: what `require('sluice')` / `import 'sluice'` add to a bare `node` start (target
 *   ≤ 60 ms): fresh processes, interleaved with bare ones, each reporting `performance.now()`
 *   (ms since its own start) and its CPU time after loading; medians of the differences.
 *
 * The package is reached as users reach it: a temporary project whose node_modules/sluice links
 * to this checkout (package.json "exports").
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as url from 'node:url';

/** The checkout: the first folder above this file with sluice's package.json (bench/ under ts-node, dist/bench built). */
function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const pj = path.join(dir, 'package.json');
    if (fs.existsSync(pj) && (JSON.parse(fs.readFileSync(pj, 'utf8')) as { name?: string }).name === 'sluice') return dir;
    if (path.dirname(dir) === dir) throw new Error(`bench/package: no sluice package.json above ${from}`);
  }
}
export const ROOT = findRoot(__dirname);

export interface BundleRow {
  bundler: string;
  entryBytes: number;
  /** Chunks the entry imports statically (loaded with it). */
  staticBytes: number;
  /** Chunks only reachable through import() (loaded on demand). */
  lazyBytes: number;
  /** The largest packages in the entry chunk, bytes each. */
  topInputs: Array<[string, number]>;
}

export interface ColdStartRow {
  load: string;
  runs: number;
  /** Median of (wall ms at the end of loading) − median of the bare start's. */
  addedWallMs: number;
  /** The same for CPU time (user + system). */
  addedCpuMs: number;
  bareWallMs: number;
}

export interface PackageResult {
  /** esbuild's (the target's). */
  bundle: BundleRow;
  /** Other bundlers, same program (undefined when one could not run here: its error). */
  others: Array<BundleRow | { bundler: string; error: string }>;
  coldStart: ColdStartRow[];
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** A temporary project whose node_modules/sluice links to this checkout (remove it when done). */
export function project(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-package-'));
  fs.mkdirSync(path.join(dir, 'node_modules'));
  fs.symlinkSync(ROOT, path.join(dir, 'node_modules', 'sluice'), 'dir');
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'bench-consumer', private: true, type: 'module' }));
  return dir;
}

function packageOf(input: string): string {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
  if (m) return m[1]!;
  return input.includes('dist/esm/') ? 'sluice' : path.basename(input.replace(/\0/g, ''));
}

export async function bundle(dir: string): Promise<BundleRow> {
  fs.writeFileSync(path.join(dir, 'app.mjs'), "import { runTurn } from 'sluice';\nconsole.log(typeof runTurn);\n");
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the repository's esbuild, as a user would run it
  const esbuild = require(path.join(ROOT, 'node_modules/esbuild')) as typeof import('esbuild');
  const result = await esbuild.build({
    absWorkingDir: dir,
    entryPoints: ['app.mjs'],
    outdir: 'out',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    minify: true,
    metafile: true,
    outExtension: { '.js': '.mjs' },
    logLevel: 'silent',
  });
  const outputs = result.metafile.outputs;
  const entryName = Object.keys(outputs).find((k) => outputs[k]!.entryPoint === 'app.mjs')!;
  const entry = outputs[entryName]!;
  const staticNames = new Set<string>();
  const walk = (name: string): void => {
    for (const imp of outputs[name]?.imports ?? []) {
      if (imp.kind === 'import-statement' && outputs[imp.path] && !staticNames.has(imp.path)) {
        staticNames.add(imp.path);
        walk(imp.path);
      }
    }
  };
  walk(entryName);
  const sizes = new Map<string, number>();
  for (const [input, v] of Object.entries(entry.inputs)) sizes.set(packageOf(input), (sizes.get(packageOf(input)) ?? 0) + v.bytesInOutput);
  let staticBytes = 0;
  let lazyBytes = 0;
  for (const [name, o] of Object.entries(outputs)) {
    if (name === entryName || name.endsWith('.map')) continue;
    if (staticNames.has(name)) staticBytes += o.bytes;
    else lazyBytes += o.bytes;
  }
  const run = spawnSync(process.execPath, [path.join(dir, 'out', path.basename(entryName))], { cwd: dir, encoding: 'utf8' });
  if (run.stdout.trim() !== 'function') throw new Error(`bench/package: the bundle did not run: ${run.stderr.slice(0, 500)}`);
  return {
    bundler: 'esbuild (esm, splitting, minify)',
    entryBytes: entry.bytes,
    staticBytes,
    lazyBytes,
    topInputs: [...sizes].sort((a, b) => b[1] - a[1]).slice(0, 5),
  };
}

/**
 * Vite 8 (Rolldown) of the same program: run in a child process (Vite is ESM-only; the benches
 * are CommonJS), sizes from its output chunks.
 */
export function viteBundle(dir: string): BundleRow | { bundler: string; error: string } {
  const bundler = 'vite (ssr build, noExternal, minify)';
  const script = `
const { build } = await import(${JSON.stringify(url.pathToFileURL(path.join(ROOT, 'node_modules/vite/dist/node/index.js')).href)});
const result = await build({ configFile: false, root: process.cwd(), logLevel: 'silent', ssr: { target: 'node', noExternal: true },
  build: { ssr: 'app.mjs', outDir: 'out-vite', emptyOutDir: true, minify: true, rollupOptions: { output: { format: 'es', entryFileNames: '[name].mjs', chunkFileNames: '[name]-[hash].mjs' } } } });
const out = (Array.isArray(result) ? result[0] : result).output.filter((o) => o.type === 'chunk');
console.log(JSON.stringify(out.map((o) => ({ name: o.fileName, entry: o.isEntry, bytes: Buffer.byteLength(o.code), imports: o.imports,
  modules: Object.entries(o.modules).map(([id, m]) => [id, m.renderedLength]) }))));`;
  const built = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (built.status !== 0) return { bundler, error: built.stderr.split('\n')[0]!.slice(0, 200) };
  const chunks = JSON.parse(built.stdout.trim().split('\n').at(-1)!) as Array<{ name: string; entry: boolean; bytes: number; imports: string[]; modules: Array<[string, number]> }>;
  const entry = chunks.find((c) => c.entry)!;
  const byName = new Map(chunks.map((c) => [c.name, c]));
  const staticNames = new Set<string>();
  const walk = (c: (typeof chunks)[number]): void => {
    for (const i of c.imports) {
      if (!byName.has(i) || staticNames.has(i)) continue;
      staticNames.add(i);
      walk(byName.get(i)!);
    }
  };
  walk(entry);
  const sizes = new Map<string, number>();
  for (const [id, n] of entry.modules) sizes.set(packageOf(id), (sizes.get(packageOf(id)) ?? 0) + n);
  const run = spawnSync(process.execPath, [path.join(dir, 'out-vite', entry.name)], { cwd: dir, encoding: 'utf8' });
  if (run.stdout.trim() !== 'function') return { bundler, error: `the bundle did not run: ${run.stderr.slice(0, 200)}` };
  return {
    bundler,
    entryBytes: entry.bytes,
    staticBytes: chunks.filter((c) => staticNames.has(c.name)).reduce((a, c) => a + c.bytes, 0),
    lazyBytes: chunks.filter((c) => c !== entry && !staticNames.has(c.name)).reduce((a, c) => a + c.bytes, 0),
    topInputs: [...sizes].sort((a, b) => b[1] - a[1]).slice(0, 5),
  };
}

export const PROBE = 'const c = process.cpuUsage(); console.log(JSON.stringify([performance.now(), (c.user + c.system) / 1000]));';
export const LOADS: Array<[string, string[]]> = [
  ['bare node', ['-e', PROBE]],
  ["require('sluice')", ['-e', `require('sluice'); ${PROBE}`]],
  ["import 'sluice'", ['--input-type=module', '-e', `import 'sluice'; ${PROBE}`]],
  ["require('sluice/history')", ['-e', `require('sluice/history'); ${PROBE}`]],
];

/** What `loads` (the first one bare node) add to a node start, in fresh processes, interleaved: medians of `rounds`. */
export function coldStart(dir: string, rounds: number, loads: Array<[string, string[]]> = LOADS): ColdStartRow[] {
  const samples = loads.map(() => ({ wall: [] as number[], cpu: [] as number[] }));
  for (let r = 0; r < rounds; r++) {
    loads.forEach(([, args], i) => {
      const out = spawnSync(process.execPath, args, { cwd: dir, encoding: 'utf8' });
      if (out.status !== 0) throw new Error(`bench/package: ${loads[i]![0]} failed: ${out.stderr.slice(0, 500)}`);
      const [wall, cpu] = JSON.parse(out.stdout.trim()) as [number, number];
      samples[i]!.wall.push(wall);
      samples[i]!.cpu.push(cpu);
    });
  }
  const bareWall = median(samples[0]!.wall);
  const bareCpu = median(samples[0]!.cpu);
  return loads.slice(1).map(([load], j) => ({
    load,
    runs: rounds,
    addedWallMs: median(samples[j + 1]!.wall) - bareWall,
    addedCpuMs: median(samples[j + 1]!.cpu) - bareCpu,
    bareWallMs: bareWall,
  }));
}

export interface LoadedModules {
  /** Files of sluice's build that `require(spec)` loaded (paths under the checkout). */
  sluiceFiles: string[];
  /** Files loaded per package (node_modules name). */
  packages: Record<string, number>;
  /** Node builtins required while loading, without the `node:` prefix. */
  builtins: string[];
}

/** What `require(spec)` loads in a fresh process in the project `dir` (sluice's files, packages, Node builtins). */
export function loadedModules(dir: string, spec = 'sluice'): LoadedModules {
  const script = `
const Module = require('node:module');
const fs = require('node:fs');
const builtins = new Set();
const orig = Module.prototype.require;
Module.prototype.require = function (id) { if (Module.isBuiltin(id)) builtins.add(id.replace(/^node:/, '')); return orig.apply(this, arguments); };
require(${JSON.stringify(spec)});
const files = Object.keys(require.cache).map((f) => fs.realpathSync(f));
console.log(JSON.stringify({ files, builtins: [...builtins].sort() }));`;
  const out = spawnSync(process.execPath, ['-e', script], { cwd: dir, encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`bench/package: require(${spec}) failed: ${out.stderr.slice(0, 500)}`);
  const { files, builtins } = JSON.parse(out.stdout.trim()) as { files: string[]; builtins: string[] };
  const root = fs.realpathSync(ROOT) + path.sep;
  const packages: Record<string, number> = {};
  const sluiceFiles: string[] = [];
  for (const f of files) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f);
    if (m) packages[m[1]!] = (packages[m[1]!] ?? 0) + 1;
    else if (f.startsWith(root)) sluiceFiles.push(path.relative(root, f));
  }
  return { sluiceFiles, packages, builtins };
}

export async function benchPackage(opts: { quick?: boolean } = {}): Promise<PackageResult> {
  if (!fs.existsSync(path.join(ROOT, 'dist/esm/index.mjs'))) throw new Error('bench/package: no ESM build (dist/esm): run npm run build');
  const dir = project();
  try {
    return { bundle: await bundle(dir), others: [viteBundle(dir)], coldStart: coldStart(dir, opts.quick ? 7 : 21) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const kb = (n: number): string => `${(n / 1024).toFixed(1)} KB`;

/** Targets of issue 19 with what this run measured (rows for bench/run.ts's target table). */
export function packageTargets(r: PackageResult): Array<{ area: string; target: string; measured: string; met: boolean | undefined }> {
  const cjs = r.coldStart.find((x) => x.load === "require('sluice')");
  return [
    { area: 'package', target: 'entry chunk of a program importing only runTurn ≤ 600 KB minified (esbuild, ESM, splitting)', measured: `${kb(r.bundle.entryBytes)} (+${kb(r.bundle.staticBytes)} static chunks; ${kb(r.bundle.lazyBytes)} lazy)`, met: r.bundle.entryBytes + r.bundle.staticBytes <= 600 * 1024 },
    { area: 'package', target: "require('sluice') adds ≤ 60 ms to a bare node start", measured: cjs ? `+${cjs.addedWallMs.toFixed(1)} ms wall, +${cjs.addedCpuMs.toFixed(1)} ms CPU (median of ${cjs.runs})` : '—', met: cjs ? cjs.addedWallMs <= 60 : undefined },
  ];
}

export function formatPackage(r: PackageResult): string {
  const row = (b: PackageResult['others'][number]): string =>
    'error' in b
      ? `| ${b.bundler} | — | — | — | could not run: ${b.error} |`
      : `| ${b.bundler}: \`import { runTurn } from 'sluice'\` | ${kb(b.entryBytes)} | ${kb(b.staticBytes)} | ${kb(b.lazyBytes)} | ${b.topInputs.map(([k, v]) => `${k} ${kb(v)}`).join(', ')} |`;
  const lines = [
    '| bundle | entry chunk | static chunks | lazy chunks | largest in the entry chunk (Vite: bytes before minifying) |',
    '|---|---:|---:|---:|---|',
    row(r.bundle),
    ...r.others.map(row),
    '',
    `| load | added wall ms | added CPU ms | runs (bare node start: ${r.coldStart[0] ? r.coldStart[0].bareWallMs.toFixed(1) : '—'} ms) |`,
    '|---|---:|---:|---:|',
    ...r.coldStart.map((c) => `| \`${c.load}\` | ${c.addedWallMs.toFixed(1)} | ${c.addedCpuMs.toFixed(1)} | ${c.runs} |`),
  ];
  return lines.join('\n') + '\n';
}

if (require.main === module) {
  benchPackage({ quick: process.argv.includes('--quick') }).then(
    (r) => process.stdout.write(formatPackage(r)),
    (err: Error) => {
      process.stderr.write(`${err.message}\n`);
      process.exitCode = 1;
    },
  );
}
