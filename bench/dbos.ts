/**
 * What a turn costs inside DBOS (docs/durability.md "Inside DBOS", cost): the same scripted turn
 * (Anthropic stream events, no delays; tools that resolve at once) run, interleaved in one process,
 *
 *   - `runTurn`                         — no journal;
 *   - `runTurn({ journal: postgres })`  — sluice's PostgreSQL journal, no DBOS;
 *   - `durableTurn` in a DBOS workflow  — the turn's DBOS step around the same journal (measured
 *     inside the workflow), and the whole workflow (start, the turn, its result).
 *
 * Rows: median wall ms per turn, and (turn − runTurn) ÷ calls in µs per call. Two turns: every
 * call safe, every call unsafe (an unsafe call waits for its durable write-ahead record).
 *
 * Needs SLUICE_PG_URL (a server where the role may create databases; DBOS creates
 * `sluice_dbos_bench`). Run: SLUICE_PG_URL=postgres://… node -r ts-node/register/transpile-only bench/dbos.ts
 * [--calls N] [--samples N]
 */
import { DBOS } from '@dbos-inc/dbos-sdk';
import { z } from 'zod';
import { closeDurableTurnStores, durableTurn } from '../src/dbos/durableTurn';
import { runTurn } from '../src/engine/runTurn';
import { defineTool } from '../src/execute/tools';
import { createTurnJournal } from '../src/journal/journal';
import { PostgresJournalStore } from '../src/journal/pgStore';

const arg = (name: string, d: number): number => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : d;
};
const CALLS = arg('--calls', 10);
const SAMPLES = arg('--samples', 30);

/** One attempt's stream: a text block, then CALLS tool calls of `name`. */
function events(name: string, calls: number): unknown[] {
  const out: unknown[] = [
    { type: 'message_start', message: { id: 'msg_b', type: 'message', role: 'assistant', model: 'bench', content: [], stop_reason: null, usage: { input_tokens: 1, output_tokens: 0 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Working.' } },
    { type: 'content_block_stop', index: 0 },
  ];
  for (let i = 0; i < calls; i++) {
    out.push({ type: 'content_block_start', index: i + 1, content_block: { type: 'tool_use', id: `toolu_${i}`, name, input: {} } });
    out.push({ type: 'content_block_delta', index: i + 1, delta: { type: 'input_json_delta', partial_json: `{"key":"k${i}"}` } });
    out.push({ type: 'content_block_stop', index: i + 1 });
  }
  out.push({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 10 } });
  out.push({ type: 'message_stop' });
  return out;
}

const RESULT = 'x'.repeat(200);
const tools = [
  defineTool({ name: 'look', kind: 'read', input: z.object({ key: z.string() }), run: async () => RESULT }),
  defineTool({ name: 'put', kind: 'other', input: z.object({ key: z.string() }), run: async () => RESULT }),
];

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  const pg = process.env.SLUICE_PG_URL;
  if (!pg) {
    process.stderr.write('bench/dbos: set SLUICE_PG_URL to a PostgreSQL URL (scripts/pg-test-server.sh start)\n');
    process.exit(2);
  }
  const url = new URL(pg);
  url.pathname = '/sluice_dbos_bench';
  const db = url.toString();
  const run = `${process.pid}-${Date.now() % 1_000_000}`;

  let inner = 0;
  const wf = DBOS.registerWorkflow(
    async (name: string) => {
      const t0 = performance.now();
      const res = await durableTurn({ format: 'anthropic', stream: () => events(name, CALLS), tools, store: db, turnKey: 't0' });
      inner = performance.now() - t0;
      return res.messages.length;
    },
    { name: 'benchTurn' },
  );
  DBOS.setConfig({ name: 'sluice-dbos-bench', systemDatabaseUrl: db, logger: { info: () => undefined, debug: () => undefined, warn: () => undefined, error: (e) => process.stderr.write(`dbos: ${String(e)}\n`) } });
  await DBOS.launch();
  const store = await PostgresJournalStore.connect({ connectionString: db });

  const rows: Array<[string, string, number, number | undefined]> = [];
  for (const name of ['look', 'put']) {
    const plain: number[] = [];
    const journaled: number[] = [];
    const durableIn: number[] = [];
    const durableWf: number[] = [];
    for (let i = -3; i < SAMPLES; i++) {
      let t = performance.now();
      await runTurn({ format: 'anthropic', stream: () => events(name, CALLS), tools });
      const a = performance.now() - t;
      t = performance.now();
      const journal = await createTurnJournal(store, `bench-${run}-${name}-${i + 3}`, { format: 'anthropic' });
      await runTurn({ format: 'anthropic', stream: () => events(name, CALLS), tools, journal });
      const b = performance.now() - t;
      t = performance.now();
      const h = await DBOS.startWorkflow(wf, { workflowID: `bench-${run}-${name}-${i + 3}` })(name);
      await h.getResult();
      const c = performance.now() - t;
      if (i < 0) continue; // warm-up
      plain.push(a);
      journaled.push(b);
      durableIn.push(inner);
      durableWf.push(c);
    }
    const base = median(plain);
    const kind = name === 'look' ? 'safe' : 'unsafe';
    const per = (m: number): number => ((m - base) * 1000) / CALLS;
    rows.push([kind, 'runTurn', base, undefined]);
    rows.push([kind, 'runTurn({ journal: postgres })', median(journaled), per(median(journaled))]);
    rows.push([kind, 'durableTurn (inside the workflow)', median(durableIn), per(median(durableIn))]);
    rows.push([kind, 'durableTurn workflow (start → result)', median(durableWf), per(median(durableWf))]);
  }
  await store.close();
  await closeDurableTurnStores();
  await DBOS.shutdown();

  process.stdout.write(`${CALLS}-call turn, ${SAMPLES} samples each (interleaved), PostgreSQL ${url.host}\n\n`);
  process.stdout.write('| calls | how | wall ms/turn (median) | µs/call over runTurn |\n|---|---|---:|---:|\n');
  for (const [kind, how, ms, us] of rows) process.stdout.write(`| ${kind} | ${how} | ${ms.toFixed(2)} | ${us === undefined ? '' : us.toFixed(0)} |\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench/dbos: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
