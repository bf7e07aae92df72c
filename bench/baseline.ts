/**
 * The baseline beside the current code in one bench run (`npm run bench -- --baseline <git-ref>`).
 *
 * `baselineDist(ref)` builds the committed tree of `ref` in a temporary folder and returns its
 * compiled `dist` directory: `git archive <commit> | tar -x` into `os.tmpdir()/sluice-baseline/`,
 * this checkout's `node_modules` symlinked in (same packages, same module instances: xstate, mitt),
 * then that tree's own `tsc -p tsconfig.build.json`. Built trees are cached by commit hash, so only
 * the first run for a commit pays the build (~1 min on the 2-vCPU machine).
 *
 * A bench then loads the baseline's modules with `baselineModule(dist, 'src/engine/controller')`
 * and runs the very same measurement on both, alternating samples (`timeSideBySide`), so load on
 * a shared machine hits both sides alike and the ratio is the number to read.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fullGc, median } from './throughput';

export interface Baseline {
  /** The ref as given (`853b903`, `main~3`, a tag). */
  ref: string;
  /** Full commit hash it resolved to. */
  commit: string;
  /** The built `dist` directory (contains `src/`, `machines/`, `bench/`). */
  dist: string;
}

/** The repository this bench runs from (the checkout whose node_modules the baseline borrows). */
export function repoRoot(): string {
  let dir = __dirname;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, '.git'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error('bench --baseline: not inside a git checkout of sluice');
    dir = up;
  }
}

function git(root: string, args: string[]): string {
  return execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** Resolve `ref`, build it once (cached by commit under os.tmpdir()), return the baseline. */
export async function resolveBaseline(ref: string, log: (s: string) => void = () => undefined): Promise<Baseline> {
  const root = repoRoot();
  let commit: string;
  try {
    commit = git(root, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  } catch {
    throw new Error(`bench --baseline: ${ref} is not a commit in ${root}`);
  }
  const cache = path.join(os.tmpdir(), 'sluice-baseline');
  const dir = path.join(cache, commit);
  const dist = path.join(dir, 'dist');
  const marker = path.join(dir, '.built');
  if (fs.existsSync(marker)) return { ref, commit, dist };

  fs.mkdirSync(cache, { recursive: true });
  const work = fs.mkdtempSync(path.join(cache, `${commit.slice(0, 12)}-`));
  try {
    log(`bench: building baseline ${ref} (${commit.slice(0, 12)}) in ${work}…\n`);
    const archive = spawnSync('sh', ['-c', `git -C "$1" archive "$2" | tar -x -C "$3"`, 'sh', root, commit, work], { encoding: 'utf8' });
    if (archive.status !== 0) throw new Error(`bench --baseline: git archive ${commit} failed: ${archive.stderr.trim()}`);
    fs.symlinkSync(path.join(root, 'node_modules'), path.join(work, 'node_modules'), 'dir');
    const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const cfg = fs.existsSync(path.join(work, 'tsconfig.build.json')) ? 'tsconfig.build.json' : 'tsconfig.json';
    const build = spawnSync(process.execPath, [tsc, '-p', cfg, '--noEmit', 'false', '--outDir', 'dist'], { cwd: work, encoding: 'utf8' });
    const entry = path.join(work, 'dist', 'src', 'engine', 'controller.js');
    if (!fs.existsSync(entry)) {
      throw new Error(`bench --baseline: building ${ref} produced no dist/src/engine/controller.js: ${(build.stdout + build.stderr).split('\n').slice(0, 5).join(' / ')}`);
    }
    // tsc emits despite type errors (e.g. an old tree against newer @types): warn, keep going.
    if (build.status !== 0) log(`bench: baseline ${ref} built with type errors (emitted anyway): ${build.stdout.split('\n')[0] ?? ''}\n`);
    fs.writeFileSync(path.join(work, '.built'), `${commit}\n`);
    try {
      fs.renameSync(work, dir);
    } catch {
      // Another run built the same commit meanwhile: use that one.
      if (!fs.existsSync(marker)) throw new Error(`bench --baseline: could not move ${work} to ${dir}`);
      fs.rmSync(work, { recursive: true, force: true });
    }
  } catch (err) {
    fs.rmSync(work, { recursive: true, force: true });
    throw err;
  }
  return { ref, commit, dist };
}

/** The built `dist` directory of `ref` (see `resolveBaseline`). */
export async function baselineDist(ref: string, log?: (s: string) => void): Promise<string> {
  return (await resolveBaseline(ref, log)).dist;
}

/** Load a module of a built tree by its path without extension: `baselineModule(dist, 'src/engine/controller')`. */
export function baselineModule<T>(dist: string, modulePath: string): T {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a module of another build, loaded by path at run time
  return require(path.join(dist, modulePath)) as T;
}

export interface SideTiming {
  /** Median CPU ms per run. */
  ms: number;
  min: number;
  wallMs: number;
  samples: number;
}

/**
 * CPU time of `current` and `baseline` measured in alternation (warm-up both, then one sample of
 * each per round, current first on even rounds and baseline first on odd ones), so machine load
 * and garbage left by one side fall on both (`gcBetween`: a full collection before every sample,
 * untimed, for runs big enough to leave old-generation garbage). Stops after `minSamples` rounds once `budgetMs` of
 * wall time is spent (at most `maxSamples`).
 */
export async function timeSideBySide(
  current: () => Promise<void> | void,
  baseline: () => Promise<void> | void,
  opts: { budgetMs: number; minSamples?: number; maxSamples?: number; warmup?: number; gcBetween?: boolean },
): Promise<{ current: SideTiming; baseline: SideTiming }> {
  const warm = opts.warmup ?? 2;
  for (let i = 0; i < warm; i++) {
    await current();
    await baseline();
  }
  const cpu: [number[], number[]] = [[], []];
  const wall: [number[], number[]] = [[], []];
  const fns = [current, baseline] as const;
  const one = async (k: 0 | 1): Promise<void> => {
    // Big runs leave old-generation garbage that the next run would pay for: collect it untimed,
    // so neither side pays for the other's.
    if (opts.gcBetween) fullGc();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await fns[k]();
    wall[k].push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu[k].push((c.user + c.system) / 1000);
  };
  const end = performance.now() + opts.budgetMs;
  const minS = opts.minSamples ?? 5;
  const maxS = opts.maxSamples ?? 200;
  for (let round = 0; cpu[0].length < minS || (performance.now() < end && cpu[0].length < maxS); round++) {
    const first = (round & 1) as 0 | 1;
    await one(first);
    await one((1 - first) as 0 | 1);
  }
  const side = (k: 0 | 1): SideTiming => ({ ms: median(cpu[k]), min: Math.min(...cpu[k]), wallMs: median(wall[k]), samples: cpu[k].length });
  return { current: side(0), baseline: side(1) };
}

if (require.main === module) {
  const ref = process.argv[2];
  if (!ref) {
    process.stderr.write('usage: node dist/bench/baseline.js <git-ref>   (prints the built dist directory)\n');
    process.exitCode = 2;
  } else {
    resolveBaseline(ref, (s) => process.stderr.write(s)).then(
      (b) => process.stdout.write(`${b.dist}\n`),
      (err: unknown) => {
        process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
        process.exitCode = 1;
      },
    );
  }
}
