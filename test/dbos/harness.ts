/**
 * Runs the crash program (examples/dbos/crash-turn.mjs, built by packageBuild.ts) as the outside
 * checker does, reads its effect logs, and checks a finished run against them.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildPackage } from './packageBuild';

export const PG_URL = process.env.SLUICE_PG_URL;

/** A database name per test file: DBOS creates it on its first launch. */
export function systemDbUrl(tag: string): string {
  const url = new URL(PG_URL!);
  url.pathname = `/sluice_dbos_${tag}_${process.pid}_${Date.now() % 1_000_000}`;
  return url.toString();
}

/** Drop a test database (connections and all). */
export async function dropDb(url: string): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- pg is an optional peer; loaded only for the cleanup
  const { Client } = require('pg') as typeof import('pg');
  const admin = new Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${new URL(url).pathname.slice(1)} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

export interface RunOptions {
  workflow: string;
  seed: number;
  calls?: number;
  eventMs?: number;
  toolMs?: number;
  env?: Record<string, string>;
  /** SIGKILL the program this many ms after it started (if it is still running). */
  killAfterMs?: number;
  /** Give up (SIGKILL, then reject) after this long. */
  timeoutMs?: number;
}

export interface RunOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** The program was killed by us (not by its own test hook). */
  killed: boolean;
}

export interface ProgramLine {
  workflow: string;
  status: string;
  calls: Array<{ index: number; id: string; name: string; safe: boolean; resumed: string; ok: boolean }>;
  messages: Array<{ role: string; calls?: Array<{ id: string; name: string; input: Record<string, unknown> }>; results?: Array<{ callId: string; ok: boolean; content: string }> }>;
}

export interface Script {
  calls: Array<{ name: string; input: Record<string, unknown> }>;
  failAfter: Array<[number, number]>;
}

const scripts = new Map<string, Script>();

/** The seed's script, as the program itself computes it (`--print-script`). */
export async function scriptOf(seed: number, calls = 4): Promise<Script> {
  const key = `${seed}:${calls}`;
  let sc = scripts.get(key);
  if (!sc) {
    const { program } = await buildPackage();
    const r = spawnSync(process.execPath, [program, '--print-script', String(seed), String(calls)], { encoding: 'utf8' });
    sc = JSON.parse(r.stdout) as Script;
    scripts.set(key, sc);
  }
  return sc;
}

export function programArgs(o: Pick<RunOptions, 'workflow' | 'seed' | 'calls' | 'eventMs' | 'toolMs'>): string[] {
  return [
    '--workflow',
    o.workflow,
    '--seed',
    String(o.seed),
    ...(o.calls !== undefined ? ['--calls', String(o.calls)] : []),
    ...(o.eventMs !== undefined ? ['--event-ms', String(o.eventMs)] : []),
    ...(o.toolMs !== undefined ? ['--tool-ms', String(o.toolMs)] : []),
  ];
}

export async function runProgram(db: string, effects: string, o: RunOptions): Promise<RunOutcome> {
  const { program } = await buildPackage();
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [program, ...programArgs(o)], {
      env: { ...process.env, DBOS_SYSTEM_DATABASE_URL: db, SLUICE_EFFECTS_DIR: effects, NODE_NO_WARNINGS: '1', ...o.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let killed = false;
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const kill = o.killAfterMs !== undefined ? setTimeout(() => ((killed = true), child.kill('SIGKILL')), o.killAfterMs) : undefined;
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`crash-turn ${o.workflow} did not finish within ${o.timeoutMs ?? 60_000} ms: ${stderr.slice(-400)}`));
    }, o.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(kill);
      clearTimeout(guard);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - t0, killed: killed && signal === 'SIGKILL' });
    });
  });
}

export interface EffectLine {
  file: 'read' | 'bump' | 'model';
  workflow: string;
  /** callId (read, bump) or the attempt number (model). */
  ref: string;
  pid: number;
  ms: number;
  end: boolean;
}

export function readEffects(dir: string, workflow: string): EffectLine[] {
  const out: EffectLine[] = [];
  for (const file of ['read', 'bump', 'model'] as const) {
    const p = path.join(dir, `${file}.log`);
    if (!fs.existsSync(p)) continue;
    for (const line of fs.readFileSync(p, 'utf8').split('\n')) {
      const [wf, ref, pid, ms, end] = line.split(' ');
      if (wf !== workflow || ref === undefined) continue;
      out.push({ file, workflow: wf, ref, pid: Number(pid), ms: Number(ms), end: end === 'end' });
    }
  }
  return out;
}

export function parseLine(stdout: string): ProgramLine {
  const lines = stdout.split('\n').filter(Boolean);
  if (lines.length !== 1) throw new Error(`expected exactly one line on stdout, got ${lines.length}`);
  return JSON.parse(lines[0]!) as ProgramLine;
}

/**
 * What a finished run must satisfy against its effect logs; returns the problems (empty: fine).
 * - no unsafe call ran twice (bump.log has each call id at most once);
 * - every real unsafe result (ok, not 'unknown-outcome') is backed by exactly one bump.log line;
 * - one result per call, in model order: the assistant message's calls, the tool message's results
 *   and the line's `calls` agree in order and number;
 * - a model stream the journal had finished is not requested again: once an unsafe tool ran (it
 *   waits for the stream's end record), no model request follows.
 */
export function checkRun(line: ProgramLine, effects: EffectLine[], script: Script): string[] {
  const problems: string[] = [];
  // The turn the script asked for: its calls, by name and input, each with its own result.
  const want = script.calls.map((c) => `${c.name} ${JSON.stringify(c.input)}`);
  const got = (line.messages[0]?.calls ?? []).map((c) => `${c.name} ${JSON.stringify(c.input)}`);
  if (JSON.stringify(got) !== JSON.stringify(want)) problems.push(`the turn's calls ${JSON.stringify(got)} are not the script's ${JSON.stringify(want)}`);
  for (const [i, r] of (line.messages[1]?.results ?? []).entries()) {
    const c = script.calls[i];
    if (!c) continue;
    const real = c.name === 'read' ? `contents of ${String(c.input.path)}` : `bumped ${String(c.input.label)}`;
    const how = line.calls[i]?.resumed;
    // An unsafe call's "outcome unknown" is its result from then on: a later resume keeps it ('kept').
    const unknown = c.name === 'bump' && (how === 'unknown-outcome' || how === 'kept') && !r.ok && /whether it took effect is unknown/.test(r.content);
    if (how === 'unknown-outcome' ? !unknown : !unknown && (r.content !== real || !r.ok))
      problems.push(`call ${i} (${c.name}, ${how}) has the result ${JSON.stringify(r.content.slice(0, 80))}`);
  }
  const bumps = effects.filter((e) => e.file === 'bump');
  const count = new Map<string, number>();
  for (const b of bumps) count.set(b.ref, (count.get(b.ref) ?? 0) + 1);
  for (const [id, n] of count) if (n > 1) problems.push(`unsafe call ${id} ran ${n} times`);
  for (const c of line.calls) {
    if (c.name !== 'bump') continue;
    const n = count.get(c.id) ?? 0;
    if (c.ok && c.resumed !== 'unknown-outcome' && n !== 1) problems.push(`unsafe call ${c.id} has a real result (${c.resumed}) and ${n} effect lines`);
  }
  const assistant = line.messages[0];
  const tool = line.messages[1];
  const ids = assistant?.calls?.map((c) => c.id) ?? [];
  if (JSON.stringify(ids) !== JSON.stringify(line.calls.map((c) => c.id))) problems.push(`calls ${JSON.stringify(line.calls.map((c) => c.id))} are not the assistant's ${JSON.stringify(ids)}`);
  if (line.calls.some((c, i) => c.index !== i)) problems.push('calls are not indexed 0..n-1 in order');
  const results = tool?.results?.map((r) => r.callId) ?? [];
  if (ids.length > 0 && JSON.stringify(results) !== JSON.stringify(ids)) problems.push(`results ${JSON.stringify(results)} are not one per call in order`);
  const firstBump = Math.min(...bumps.map((b) => b.ms));
  const late = effects.filter((e) => e.file === 'model' && !e.end && e.ms > firstBump);
  if (late.length > 0) problems.push(`model requested again after an unsafe tool ran (attempts ${late.map((e) => e.ref).join(',')})`);
  if (line.status !== 'SUCCESS') problems.push(`status ${line.status}`);
  return problems;
}

/** A seeded PRNG for kill points (mulberry32, the project's one implementation). */
export { prng } from '../../bench/prng';

export interface CrashRunStats {
  launches: number;
  kills: number;
  line: ProgramLine;
}

/**
 * Launch the program for one workflow, SIGKILL it after a random delay in [0, spanMs), relaunch,
 * until a launch finishes by itself (the last launches get more time). `first` sets env for the
 * first launch only (a self-kill at a named boundary).
 */
export async function crashUntilDone(db: string, effects: string, o: RunOptions & { spanMs: number; rand: () => number; first?: Record<string, string>; maxLaunches?: number }): Promise<CrashRunStats> {
  let kills = 0;
  const max = o.maxLaunches ?? 40;
  for (let launch = 1; launch <= max; launch++) {
    const last = launch > max / 2;
    const r = await runProgram(db, effects, {
      ...o,
      env: { ...o.env, ...(launch === 1 ? o.first : {}) },
      killAfterMs: last ? undefined : Math.floor(o.rand() * o.spanMs),
    });
    if (r.signal === 'SIGKILL') {
      kills++;
      continue;
    }
    if (r.code !== 0) throw new Error(`launch ${launch} of ${o.workflow} exited ${r.code}: ${r.stderr.trim().slice(-600)}`);
    return { launches: launch, kills, line: parseLine(r.stdout) };
  }
  throw new Error(`${o.workflow}: no launch finished in ${max}`);
}
