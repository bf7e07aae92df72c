#!/usr/bin/env node
/**
 * One scripted sluice turn as the DBOS workflow ID: the program a crash checker kills with SIGKILL
 * at random points and starts again until it prints its result (docs/durability.md "Inside DBOS").
 *
 *   node examples/dbos/crash-turn.mjs --workflow ID --seed N [--calls K] [--event-ms M] [--tool-ms T]
 *
 * Env: DBOS_SYSTEM_DATABASE_URL (a PostgreSQL URL; DBOS creates the database if missing; the turn
 * journal's tables live there too) and SLUICE_EFFECTS_DIR (where the effect logs go).
 *
 * - The scripted model (Anthropic stream events): `--seed` picks K calls, a mix of the safe `read`
 *   and the unsafe `bump`, and which attempts fail mid-stream (an overloaded error: retryable).
 *   It appends `<workflow> <attempt> <pid> <epoch ms>` to model.log at each request and
 *   `<workflow> <attempt> <pid> <epoch ms> end` when its stream ends.
 * - Each tool run appends `<workflow> <callId> <pid> <epoch ms at the tool's start>` to read.log /
 *   bump.log (fsync'd, inside the tool, before it returns).
 * - Start-or-attach: DBOS.launch() recovers the workflow if a crash left it pending; starting it
 *   with the same id attaches to it. On success: one JSON line on stdout, exit 0. A finished
 *   workflow prints the same line again and runs nothing.
 *
 * Test hooks (env; the crash tests use them to kill at exact boundaries and to change the code):
 * SLUICE_TEST_DIE_AFTER_EFFECT=N (SIGKILL itself right after writing its Nth effect line),
 * SLUICE_TEST_DIE_AFTER_APPEND=N (SIGKILL itself right after the journal's Nth append committed),
 * SLUICE_TEST_DIE_AT=before-turn|after-turn, SLUICE_TEST_TURN_KEY (default t0),
 * SLUICE_TEST_EXTRA_TOOL=1 (one more tool: another version of the code), SLUICE_TEST_APP_VERSION
 * (DBOS applicationVersion; default crash-turn-1).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import process from 'node:process';
import { clearTimeout, setTimeout } from 'node:timers';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { z } from 'zod';
import { defineTool, openStore } from 'sluice';
import { closeDurableTurnStores, durableTurn } from 'sluice/dbos';

function usage(msg) {
  process.stderr.write(`crash-turn: ${msg}\nusage: node examples/dbos/crash-turn.mjs --workflow ID --seed N [--calls K] [--event-ms M] [--tool-ms T]\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const out = { calls: 4, eventMs: 20, toolMs: 60 };
  const num = (flag, v, min) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) usage(`${flag} must be an integer ≥ ${min} (got ${JSON.stringify(v)})`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const v = argv[i + 1];
    if (v === undefined) usage(`${flag} needs a value`);
    i++;
    if (flag === '--workflow') out.workflow = v;
    else if (flag === '--seed') out.seed = num(flag, v, 0);
    else if (flag === '--calls') out.calls = num(flag, v, 1);
    else if (flag === '--event-ms') out.eventMs = num(flag, v, 0);
    else if (flag === '--tool-ms') out.toolMs = num(flag, v, 0);
    else usage(`unknown flag ${flag}`);
  }
  if (!out.workflow) usage('--workflow is required');
  if (out.seed === undefined) usage('--seed is required');
  return out;
}

/** mulberry32: a small seeded PRNG (the script must be the same in every process). */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seed's script: the calls (same in every attempt, ids per attempt) and where attempts fail. */
export function script(seed, k) {
  const r = rng(seed * 7919 + 17);
  const names = Array.from({ length: k }, () => (r() < 0.5 ? 'read' : 'bump'));
  if (k >= 2 && names.every((n) => n === names[0])) names[k - 1] = names[0] === 'read' ? 'bump' : 'read';
  const calls = names.map((name, i) => ({ name, input: name === 'read' ? { path: `notes/${seed}-${i}.txt` } : { label: `b${i}` } }));
  // Attempt 1 fails after some released calls with probability 1/2, attempt 2 with 1/4; later ones finish.
  const failAfter = new Map();
  if (r() < 0.5) failAfter.set(1, Math.floor(r() * k));
  if (r() < 0.25) failAfter.set(2, Math.floor(r() * k));
  return { calls, failAfter };
}

const EFFECTS = process.env.SLUICE_EFFECTS_DIR;
const DIE_AFTER = Number(process.env.SLUICE_TEST_DIE_AFTER_EFFECT ?? 0);
let effects = 0;

function dieAt(point) {
  if (process.env.SLUICE_TEST_DIE_AT === point) process.kill(process.pid, 'SIGKILL');
}

/** Append one line and fsync it before returning. */
function effect(file, line) {
  const fd = fs.openSync(path.join(EFFECTS, file), 'a');
  try {
    fs.writeSync(fd, `${line}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  if (++effects === DIE_AFTER) process.kill(process.pid, 'SIGKILL');
}

const sleep = (ms, signal) =>
  new Promise((resolve) => {
    if (ms <= 0) return resolve();
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    });
  });

/** Attempt `attempt` of the scripted model: Anthropic Messages stream events, one every eventMs. */
async function* model(wf, attempt, sc, eventMs) {
  effect('model.log', `${wf} ${attempt} ${process.pid} ${Date.now()}`);
  const ev = async function* (e) {
    await sleep(eventMs);
    yield e;
  };
  yield* ev({ type: 'message_start', message: { id: `msg_${attempt}`, type: 'message', role: 'assistant', model: 'scripted', content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 0 } } });
  yield* ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
  yield* ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `Attempt ${attempt}: working.` } });
  yield* ev({ type: 'content_block_stop', index: 0 });
  const failAt = sc.failAfter.get(attempt);
  for (let i = 0; i < sc.calls.length; i++) {
    const c = sc.calls[i];
    const json = JSON.stringify(c.input);
    const cut = Math.floor(json.length / 2);
    yield* ev({ type: 'content_block_start', index: i + 1, content_block: { type: 'tool_use', id: `toolu_a${attempt}_${i}`, name: c.name, input: {} } });
    yield* ev({ type: 'content_block_delta', index: i + 1, delta: { type: 'input_json_delta', partial_json: json.slice(0, cut) } });
    yield* ev({ type: 'content_block_delta', index: i + 1, delta: { type: 'input_json_delta', partial_json: json.slice(cut) } });
    yield* ev({ type: 'content_block_stop', index: i + 1 });
    if (failAt === i) {
      yield* ev({ type: 'error', error: { type: 'overloaded_error', message: 'scripted overload' } });
      return;
    }
  }
  yield* ev({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 40 } });
  effect('model.log', `${wf} ${attempt} ${process.pid} ${Date.now()} end`);
  yield { type: 'message_stop' };
}

function tools(wf, toolMs) {
  const read = defineTool({
    name: 'read',
    kind: 'read',
    description: 'Read a note',
    input: z.object({ path: z.string() }),
    run: async ({ path: p }, { signal, callId }) => {
      const t0 = Date.now();
      await sleep(toolMs, signal);
      effect('read.log', `${wf} ${callId} ${process.pid} ${t0}`);
      return `contents of ${p}`;
    },
  });
  const bump = defineTool({
    name: 'bump',
    kind: 'other',
    description: 'Bump a counter (a side effect)',
    input: z.object({ label: z.string() }),
    run: async ({ label }, { callId }) => {
      const t0 = Date.now();
      await sleep(toolMs / 2);
      effect('bump.log', `${wf} ${callId} ${process.pid} ${t0}`);
      await sleep(toolMs / 2);
      return `bumped ${label}`;
    },
  });
  if (process.env.SLUICE_TEST_EXTRA_TOOL !== '1') return [read, bump];
  const extra = defineTool({ name: 'extra', kind: 'read', input: z.object({}), run: async () => 'extra' });
  return [read, bump, extra];
}

/** Route DBOS's own log lines to stderr (stdout carries only the result line). */
const quietLogger = {
  info: () => undefined,
  debug: () => undefined,
  warn: (e) => process.stderr.write(`dbos warn: ${e instanceof Error ? e.message : String(e)}\n`),
  error: (e) => process.stderr.write(`dbos error: ${e instanceof Error ? e.message : String(e)}\n`),
};

/** The journal store, killing this process after its Nth append when the test hook asks (opened at first use: after DBOS.launch() created the database). */
function dyingStore(url, n) {
  let opened;
  const inner = () => (opened ??= openStore(url));
  let appends = 0;
  return {
    name: 'postgres',
    append: async (turn, records, opts) => {
      await (await inner()).append(turn, records, opts);
      if (++appends === n) process.kill(process.pid, 'SIGKILL');
    },
    read: async (turn) => (await inner()).read(turn),
    list: async () => (await inner()).list(),
    lease: async (turn, owner, ttl) => (await inner()).lease(turn, owner, ttl),
    close: async () => (opened ? (await opened).close() : undefined),
  };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const url = process.env.DBOS_SYSTEM_DATABASE_URL;
  if (!url) usage('DBOS_SYSTEM_DATABASE_URL must be set to a PostgreSQL URL');
  if (!EFFECTS) usage('SLUICE_EFFECTS_DIR must be set to a directory');
  fs.mkdirSync(EFFECTS, { recursive: true });
  const dieAfterAppend = Number(process.env.SLUICE_TEST_DIE_AFTER_APPEND ?? 0);
  const store = dieAfterAppend > 0 ? dyingStore(url, dieAfterAppend) : undefined;

  const turnWorkflow = DBOS.registerWorkflow(
    async (a) => {
      const wf = DBOS.workflowID;
      const sc = script(a.seed, a.calls);
      dieAt('before-turn');
      const turn = await durableTurn({
        format: 'anthropic',
        turnKey: process.env.SLUICE_TEST_TURN_KEY ?? 't0',
        stream: (attempt) => model(wf, attempt, sc, a.eventMs),
        tools: tools(wf, a.toolMs),
        policy: { maxAttempts: 4, retryBaseMs: 20 },
        ...(store ? { store } : {}),
      });
      dieAt('after-turn');
      const byIndex = new Map(turn.calls.filter((c) => turn.resumed.some((r) => r.id === c.id)).map((c) => [c.index, c]));
      return {
        calls: turn.resumed.map((r) => ({
          index: r.index,
          id: r.id,
          name: r.name,
          safe: r.name === 'read',
          resumed: r.resumed,
          ok: byIndex.get(r.index)?.result?.ok === true,
        })),
        messages: turn.messages,
      };
    },
    { name: 'sluiceCrashTurn' },
  );

  DBOS.setConfig({ name: 'sluice-crash-turn', systemDatabaseUrl: url, applicationVersion: process.env.SLUICE_TEST_APP_VERSION ?? 'crash-turn-1', logger: quietLogger });
  await DBOS.launch();
  const handle = await DBOS.startWorkflow(turnWorkflow, { workflowID: args.workflow })({ seed: args.seed, calls: args.calls, eventMs: args.eventMs, toolMs: args.toolMs });
  const out = await handle.getResult();
  const status = (await handle.getStatus())?.status ?? 'UNKNOWN';
  process.stdout.write(`${JSON.stringify({ workflow: args.workflow, status, calls: out.calls, messages: out.messages })}\n`);
  await closeDurableTurnStores();
  await store?.close();
  await Promise.race([DBOS.shutdown(), sleep(3000)]);
  process.exit(status === 'SUCCESS' ? 0 : 1);
}

/** The seed's script as JSON (for tests): node crash-turn.mjs --print-script SEED CALLS */
if (process.argv[2] === '--print-script') {
  const sc = script(Number(process.argv[3]), Number(process.argv[4] ?? 4));
  process.stdout.write(`${JSON.stringify({ calls: sc.calls, failAfter: [...sc.failAfter] })}\n`);
  process.exit(0);
}

main().catch((err) => {
  process.stderr.write(`crash-turn: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}\n`);
  process.exit(1);
});
