import { type CrashOptions, newStats, replayPath, type ReplayFailure, type ReplayStats } from './harness';
import { buildGraph, edgeCoverPaths, type ModelGraph, type ModelPath, shortestPaths } from './paths';
import type { ModelOptions } from './turnModel';

/**
 * Shared driver for the model-based test files: build the graph, generate the path sets, replay
 * them, and collect the numbers for the report.
 */

/** `npm run test:deep` sets SLUICE_DEEP=1: N = 3 paths are replayed too. */
export const DEEP = process.env.SLUICE_DEEP === '1' || process.env.SLUICE_DEEP === 'true';

/**
 * SUT bugs found by these tests and reported to the machine owner, not yet fixed. A violation
 * whose message matches is counted and printed, but does not fail the replay tests; each has a
 * `test.failing` reproduction in regressions.test.ts, which starts failing once the bug is fixed
 * (then delete the entry here and make the reproduction a plain test).
 */
export const KNOWN_BUGS: Array<{ id: string; match: RegExp; summary: string }> = [
  // Empty: `settling-counts-as-resulted` (found on 48/4,695 N = 2 edge paths) was fixed in b8c847f;
  // its reproductions are regression tests in regressions.test.ts.
];

export function knownBug(message: string): string | undefined {
  return KNOWN_BUGS.find((b) => b.match.test(message))?.id;
}

const graphs = new Map<string, ModelGraph>();

export function graphFor(n: number, options: ModelOptions = {}): ModelGraph {
  const key = `${n}:${JSON.stringify(options)}`;
  let g = graphs.get(key);
  if (!g) graphs.set(key, (g = buildGraph(n, options)));
  return g;
}

export interface SetResult {
  label: string;
  n: number;
  paths: number;
  longest: number;
  failures: Array<ReplayFailure & { path: number }>;
  stats: ReplayStats;
  ms: number;
}

export async function replaySet(label: string, g: ModelGraph, paths: ModelPath[], mutations: CrashOptions = {}): Promise<SetResult> {
  const stats = newStats();
  const t0 = performance.now();
  const failures: SetResult['failures'] = [];
  for (let k = 0; k < paths.length; k++) {
    const f = await replayPath(paths[k]!, g.initial, stats, knownBug, { crash: g.options.crash === true, ...mutations });
    if (f) failures.push({ ...f, path: k });
  }
  return {
    label,
    n: g.n,
    paths: paths.length,
    longest: Math.max(0, ...paths.map((p) => p.steps.length)),
    failures,
    stats,
    ms: performance.now() - t0,
  };
}

export function pathSets(g: ModelGraph): { edges: ModelPath[]; shortest: ModelPath[] } {
  return { edges: edgeCoverPaths(g), shortest: shortestPaths(g) };
}

/** The shortest failing trails, for a readable assertion message. */
export function describeFailures(fs: SetResult['failures'], max = 3): string {
  return [...fs]
    .sort((a, b) => a.step - b.step)
    .slice(0, max)
    .map((f) => `path #${f.path}, step ${f.step}: ${f.message}\n${f.trail}`)
    .join('\n\n');
}

/** Print a report block without Jest's console decoration. */
export function report(lines: string[]): void {
  process.stdout.write(`\n${lines.join('\n')}\n`);
}
