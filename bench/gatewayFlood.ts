/**
 * The gateway's per-chunk translation on a text flood, without HTTP: 100k OpenAI-chat text chunks
 * (in 16 KiB reads, as a socket delivers them) → wire reader → TurnController (gateway mode) →
 * each route's SSE encoder, CPU time in this process. With `--baseline <git-ref>` the same work
 * runs on that commit's build (bench/baseline.ts) in alternation (`timeSideBySide`), so the ratio
 * is this tree's translation cost against the baseline's on the same machine at the same time.
 * (bench/gatewayInbound.ts `--text 100000` measures the whole gateway process against a byte pipe.)
 *
 *   npx ts-node -T bench/gatewayFlood.ts [--chunks N] [--baseline <git-ref>] [--current <git-ref>] [--budget-ms N]
 *   npx ts-node -T bench/gatewayFlood.ts --huge 4,16 [--baseline <git-ref>]   (one huge event: the longest read, issue 18)
 *   (`--current HEAD`: this side from a build of the last commit too, so both sides are tsc output)
 */
import * as fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { baselineDist, baselineModule, timeSideBySide } from './baseline';
import { chatChunk } from '../src/gateway/scripted';

type Api = 'messages' | 'responses' | 'chat';
const APIS: readonly Api[] = ['messages', 'responses', 'chat'];

interface Encoder {
  start?(): string;
  push(e: unknown): string;
  /** Piecewise output (src/encode/pieces.ts; absent in older builds). */
  enablePieces?(): void;
  readonly pending?: boolean;
  more?(): string;
}
interface Modules {
  createStreamReader(format: 'openai-chat'): { write(c: Uint8Array): { type: string }[]; end(): { type: string }[] };
  TurnController: new (o: { mode: 'gateway'; format: 'openai-chat' }) => { feed(e: unknown): void; events: { on(t: 'output', f: (e: unknown) => void): void } };
  encoder(api: Api): Encoder;
}

function load(root: string | undefined): Modules {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- this tree's sources or another build, by path
  const req = (m: string): Record<string, unknown> => (root ? baselineModule<Record<string, unknown>>(root, m) : (require(`../${m}`) as Record<string, unknown>));
  const wire = req('src/wire/index') as unknown as Pick<Modules, 'createStreamReader'>;
  const ctrl = req('src/engine/controller') as unknown as Pick<Modules, 'TurnController'>;
  const a = req('src/encode/anthropicSse') as { AnthropicSseEncoder: new (o: object) => Encoder };
  const r = req('src/encode/responsesSse') as { ResponsesSseEncoder: new (o: object) => Encoder };
  const c = req('src/encode/chatSse') as { ChatSseEncoder: new (o: object) => Encoder };
  const o = { model: 'bench', inputTokens: 10 };
  return {
    createStreamReader: wire.createStreamReader,
    TurnController: ctrl.TurnController,
    encoder: (api) => (api === 'messages' ? new a.AnthropicSseEncoder(o) : api === 'responses' ? new r.ResponsesSseEncoder(o) : new c.ChatSseEncoder(o)),
  };
}

/** The upstream stream in socket-sized reads. */
function floodReads(chunks: number): Buffer[] {
  const parts: string[] = [`data: ${JSON.stringify(chatChunk({ content: '' }))}\n\n`];
  for (let k = 0; k < chunks; k++) parts.push(`data: ${JSON.stringify({ ...chatChunk({ content: `word${k} ` }), id: 'chatcmpl-flood' })}\n\n`);
  parts.push(`data: ${JSON.stringify(chatChunk({ finish: 'stop' }))}\n\n`, 'data: [DONE]\n\n');
  const all = Buffer.from(parts.join(''), 'utf8');
  const reads: Buffer[] = [];
  for (let i = 0; i < all.length; i += 16_384) reads.push(all.subarray(i, i + 16_384));
  return reads;
}

/** One flood through reader → controller → encoder; returns the bytes written (a check that work happened). */
function translate(m: Modules, api: Api, reads: Buffer[]): number {
  const reader = m.createStreamReader('openai-chat');
  const ctrl = new m.TurnController({ mode: 'gateway', format: 'openai-chat' });
  const enc = m.encoder(api);
  let out = enc.start?.() ?? '';
  let bytes = 0;
  ctrl.events.on('output', (e) => (out += enc.push(e)));
  for (const r of reads) {
    for (const e of reader.write(r)) ctrl.feed(e);
    bytes += out.length;
    out = '';
  }
  for (const e of reader.end()) ctrl.feed(e);
  return bytes + out.length;
}

/**
 * One huge upstream event (issue 18): a tool call whose arguments (`mib` MiB of JSON text, file
 * content with quotes, tabs and newlines, so escaped again on the wire) arrive in ONE OpenAI-chat
 * SSE event, read in 64 KiB pieces through reader → controller → the Messages encoder, as the
 * gateway runs them: the encoder with `enablePieces()` (src/encode/pieces.ts), each `more()` its
 * own turn of the event loop. Reported: the longest synchronous stretch (one read with what it
 * triggers, or one `more()`: what one request blocks the event loop for) and its parts in the wire
 * reader, the controller (argument buffer, completion, release) and the encoder — in this thread's
 * CPU time (Linux; wall time elsewhere), so a loaded machine's run-queue waits do not count.
 */
export interface HugeEventRow {
  mib: number;
  /** Longest synchronous stretch, ms (one read: wire + controller + encoder; or one encoder piece). */
  worstReadMs: number;
  wireMs: number;
  controllerMs: number;
  encodeMs: number;
  /** Encoder pieces written after the read that released the call (each its own stretch). */
  pieces: number;
}

/**
 * This thread's CPU time in ms (Linux schedstat: what the work cost the event loop, without the time
 * spent waiting for a core on a loaded machine); wall time where the kernel does not say.
 */
function threadMs(): number {
  try {
    return Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return performance.now();
  }
}

function hugeEventReads(mib: number): Buffer[] {
  const line = 'const s = "a\\tb"; // x\n';
  const content = line.repeat(Math.ceil((mib * 1_048_576) / line.length)).slice(0, mib * 1_048_576);
  const args = JSON.stringify({ path: '/big.ts', content });
  const text = [
    chatChunk({ tool: { index: 0, id: 'call_big', name: 'write_file', args: '' } }),
    chatChunk({ tool: { index: 0, args } }),
    chatChunk({ finish: 'tool_calls' }),
  ]
    .map((c) => `data: ${JSON.stringify(c)}\n\n`)
    .join('');
  const all = Buffer.from(`${text}data: [DONE]\n\n`, 'utf8');
  const reads: Buffer[] = [];
  for (let i = 0; i < all.length; i += 65_536) reads.push(all.subarray(i, i + 65_536));
  return reads;
}

export function benchHugeEvent(mibs: readonly number[] = [4, 16], root?: string): HugeEventRow[] {
  const m = load(root);
  const rows: HugeEventRow[] = [];
  for (const mib of mibs) {
    const reads = hugeEventReads(mib);
    const reader = m.createStreamReader('openai-chat');
    const ctrl = new m.TurnController({ mode: 'gateway', format: 'openai-chat' });
    const enc = m.encoder('messages');
    enc.enablePieces?.();
    let encodeMs = 0;
    let bytes = 0;
    ctrl.events.on('output', (e) => {
      const t = threadMs();
      bytes += enc.push(e).length;
      encodeMs += threadMs() - t;
    });
    let worst = 0;
    let wire = 0;
    let enc0 = 0;
    let pieces = 0;
    const worstOf = (d: number, w: number, e: number): void => {
      if (d > worst) {
        worst = d;
        wire = w;
        enc0 = e;
      }
    };
    for (const r of [...reads, undefined]) {
      const e0 = encodeMs;
      const t0 = threadMs();
      const evs = r ? reader.write(r) : reader.end();
      const t1 = threadMs();
      for (const e of evs) ctrl.feed(e);
      worstOf(threadMs() - t0, t1 - t0, encodeMs - e0);
      // The gateway's sink writes the rest a piece per turn of the event loop.
      while (enc.pending === true) {
        const t = threadMs();
        bytes += enc.more!().length;
        const d = threadMs() - t;
        encodeMs += d;
        pieces++;
        worstOf(d, 0, d);
      }
    }
    if (bytes < mib * 1_048_576) throw new Error(`gateway-flood --huge: the call did not reach the encoder (${bytes} bytes out)`);
    const r2 = (x: number): number => Math.round(x * 10) / 10;
    rows.push({ mib, worstReadMs: r2(worst), wireMs: r2(wire), controllerMs: r2(worst - wire - enc0), encodeMs: r2(enc0), pieces });
  }
  return rows;
}

export interface FloodRow {
  api: Api;
  chunks: number;
  /** CPU ms per flood (median), µs per chunk. */
  ms: number;
  usPerChunk: number;
  baselineMs?: number;
  baselineUsPerChunk?: number;
  /** this ÷ baseline. */
  vsBaseline?: number;
  samples: number;
}

export async function benchGatewayFlood(opts: { chunks?: number; baselineDist?: string; currentDist?: string; budgetMs?: number } = {}): Promise<FloodRow[]> {
  const chunks = opts.chunks ?? 100_000;
  const reads = floodReads(chunks);
  const cur = load(opts.currentDist);
  const base = opts.baselineDist ? load(opts.baselineDist) : undefined;
  const rows: FloodRow[] = [];
  const r2 = (x: number): number => Math.round(x * 100) / 100;
  for (const api of APIS) {
    const t = await timeSideBySide(
      () => void translate(cur, api, reads),
      () => void translate(base ?? cur, api, reads),
      { budgetMs: opts.budgetMs ?? 6000, minSamples: 5 },
    );
    const row: FloodRow = { api, chunks, ms: r2(t.current.ms), usPerChunk: r2((t.current.ms * 1000) / chunks), samples: t.current.samples };
    if (base) {
      row.baselineMs = r2(t.baseline.ms);
      row.baselineUsPerChunk = r2((t.baseline.ms * 1000) / chunks);
      row.vsBaseline = r2(t.current.ms / t.baseline.ms);
    }
    rows.push(row);
  }
  return rows;
}

export function formatGatewayFlood(rows: FloodRow[], baselineRef?: string): string {
  const b = baselineRef ? ` | baseline (${baselineRef}) ms | baseline µs/chunk | × baseline` : '';
  const lines = [`| inbound API | chunks | CPU ms per flood | µs/chunk${b} | samples |`, `|---|---:|---:|---:${baselineRef ? '|---:|---:|---:' : ''}|---:|`];
  for (const r of rows) {
    const bc = baselineRef ? ` | ${r.baselineMs} | ${r.baselineUsPerChunk} | × ${r.vsBaseline}` : '';
    lines.push(`| ${r.api} | ${r.chunks} | ${r.ms} | ${r.usPerChunk}${bc} | ${r.samples} |`);
  }
  return lines.join('\n') + '\n';
}

if (require.main === module) {
  const arg = (flag: string): string | undefined => {
    const i = process.argv.indexOf(flag);
    return i < 0 ? undefined : process.argv[i + 1];
  };
  const huge = arg('--huge');
  if (huge !== undefined) {
    // One huge event per size (issue 18): `--huge 4,16` (MiB); with `--baseline <ref>` that build's rows first, then this tree's.
    const mibs = huge.split(',').map(Number);
    const ref = arg('--baseline');
    const table = (label: string, rows: HugeEventRow[]): string =>
      [`| ${label}: one event of MiB | longest stretch ms | of which wire reader ms | controller ms | encoder ms | encoder pieces |`, '|---:|---:|---:|---:|---:|---:|', ...rows.map((r) => `| ${r.mib} | ${r.worstReadMs} | ${r.wireMs} | ${r.controllerMs} | ${r.encodeMs} | ${r.pieces} |`)].join('\n') + '\n' + JSON.stringify(rows) + '\n';
    void (ref ? baselineDist(ref, (s) => void process.stderr.write(s)) : Promise.resolve(undefined)).then((root) => {
      if (root && ref) process.stdout.write(table(`baseline ${ref}`, benchHugeEvent(mibs, root)));
      process.stdout.write(table('this tree', benchHugeEvent(mibs)));
      process.exit(0);
    });
  } else {
    const ref = arg('--baseline');
    const currentRef = arg('--current');
    const log = (s: string): void => void process.stderr.write(s);
    const build = (r: string | undefined): Promise<string | undefined> => (r ? baselineDist(r, log) : Promise.resolve(undefined));
    Promise.all([build(ref), build(currentRef)])
      .then(([b, c]) =>
        benchGatewayFlood({ chunks: Number(arg('--chunks') ?? 100_000), budgetMs: Number(arg('--budget-ms') ?? 6000), ...(b ? { baselineDist: b } : {}), ...(c ? { currentDist: c } : {}) }),
      )
      .then((rows) => process.stdout.write(formatGatewayFlood(rows, ref) + JSON.stringify(rows) + '\n'))
      .catch((err: unknown) => {
        process.stderr.write(`gateway-flood: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exitCode = 1;
      });
  }
}
