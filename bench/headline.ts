/**
 * The headline benchmark: how much turn time does early dispatch save on coding-agent turns?
 *
 * What is simulated: the model. Each turn of the corpus (`HEADLINE_TURNS`) is a sequence of text
 * and tool calls shaped like a coding agent's step; it is turned into the provider's own stream
 * objects (Anthropic Messages, OpenAI Chat or Gemini, as that provider's SDK yields them) and
 * paced on the real clock at a provider profile's published output speed (`PROFILES`). Time to
 * first token is not waited for (it is the same with and without early dispatch); it is added to
 * the turn time when the saving is given as a share of it.
 *
 * What is measured: everything after the model. Each paced stream goes through the real
 * `runTurn` (real timers, the real shell classifier), whose tools really run on this repository:
 * read a file, `git grep` (or ripgrep when installed), `ls`, `git log`, `git diff`, `git status`,
 * a short `node --test` run, and an edit applied to a copy of the file in a temporary folder.
 * Every turn runs twice, once with early dispatch (`earlyStart: 'safe'`, the default) and once
 * post-stream (`earlyStart: 'none'`: every call starts after the stream ended, read-only ones
 * still concurrently, as qwen-code, Gemini CLI and most harnesses do), in alternating order.
 *
 * Per turn: the tail of a run is its last tool result − the end of the stream as sluice read it;
 * saving = post-stream tail − early tail (each the median of `rounds` runs, default 2). The
 * stream's timing is simulated and the same in both runs, so the saving is taken from the end of
 * the stream: on a busy machine timer lateness moves both stream ends by tens of ms, more than
 * many tools take, and would otherwise be counted as saving or loss. Whether early dispatch slows
 * the reading of the stream itself is reported beside it (stream end lag: the end as read − the
 * end as scheduled, early against post-stream). Turn time = time to first token + the stream's
 * scheduled length + the tail. Ideal: every tool's time hidden behind the stream, i.e. a saving of
 * the whole post-stream tail; no dispatcher reaches it when the last call's tool takes time, as
 * that tool can start only once its call completed. Share = saving ÷ post-stream turn time. Per
 * profile: median and p90 over the corpus.
 *
 * Run: `npm run bench -- --only headline` (about 3–4 minutes), `--quick` for a smoke run (two
 * fast profiles, five turns, a few seconds). `node dist/bench/headline.js [--quick] [--json]`.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import type { CallTiming } from '../src/engine/controller';
import { runTurn } from '../src/engine/runTurn';
import { defineTool, type AnyTool } from '../src/execute/tools';
import type { WireFormat } from '../src/wire/events';
import { median, percentile } from './throughput';

/** A provider profile: output speed and time to first token from a published measurement. */
export interface Profile {
  id: string;
  label: string;
  format: Extract<WireFormat, 'anthropic' | 'openai-chat' | 'gemini'>;
  tokensPerSec: number;
  ttftMs: number;
  source: string;
}

/**
 * Published medians (Artificial Analysis output speed: tokens per second after the first chunk;
 * latency: seconds to the first token). Where a page gives no time to first token the value is
 * marked as assumed in `source`.
 */
export const PROFILES: readonly Profile[] = [
  {
    id: 'sonnet',
    label: 'Claude Sonnet 4.5, Anthropic API',
    format: 'anthropic',
    tokensPerSec: 63,
    ttftMs: 1800,
    source: '63 tok/s, TTFT 1.80 s: Artificial Analysis, as quoted at lattice.uptownhr.com/claude-opus-4-5/speed-analysis',
  },
  {
    id: 'gpt5',
    label: 'GPT-5 (minimal reasoning), OpenAI API',
    format: 'openai-chat',
    tokensPerSec: 80,
    ttftMs: 890,
    source: '80 tok/s, TTFT 0.89 s: artificialanalysis.ai/models/gpt-5-minimal/providers',
  },
  {
    id: 'flash',
    label: 'Gemini 1.5 Flash, Google AI Studio',
    format: 'gemini',
    tokensPerSec: 190,
    ttftMs: 400,
    source: '190 tok/s, TTFT 0.40 s: artificialanalysis.ai/models/gemini-1-5-flash/providers (AI Studio)',
  },
  {
    id: 'wafer',
    label: 'gpt-oss-120B on Cerebras (OpenAI-compatible)',
    format: 'openai-chat',
    tokensPerSec: 2000,
    ttftMs: 300,
    source: '~2,059 tok/s: tokenomics.info/cerebras (from Artificial Analysis); TTFT 0.3 s assumed (no figure published there)',
  },
];

type Segment = { text: string } | { call: { name: string; args: Record<string, unknown> } };

export interface HeadlineTurn {
  id: string;
  /** What the step does, for the per-turn table. */
  what: string;
  segments: Segment[];
}

const t = (text: string): Segment => ({ text });
const c = (name: string, args: Record<string, unknown>): Segment => ({ call: { name, args } });
const read = (file_path: string) => c('read_file', { file_path });
const grep = (pattern: string, p: string, glob?: string) => c('grep', { pattern, path: p, ...(glob ? { glob } : {}) });
const bash = (command: string, description: string) => c('bash', { command, description });

/** Prose of about `words` words (a reply or a plan): the content does not matter, its length does. */
function prose(words: number): string {
  const src = (
    'The controller releases each call when its arguments close, so the read can start while the rest of the ' +
    'answer is still streaming. I checked the barrier rule against the spec and the tests cover the retry path ' +
    'as well as the abort path, which keeps the history valid. Next I will look at how the gateway hands the ' +
    'completed call to its client and whether the journal records the start before the tool runs.'
  ).split(' ');
  return Array.from({ length: words }, (_, i) => src[i % src.length]!).join(' ') + '.';
}

/** An edit's replacement text of about `lines` lines of TypeScript. */
function code(lines: number): string {
  const src = [
    'export function releaseOrder(calls: readonly CallState[]): number[] {',
    '  const out: number[] = [];',
    '  for (const call of calls) {',
    "    if (call.phase === 'pending') break; // an earlier pending call is a barrier",
    "    if (call.phase === 'complete' && !call.released) out.push(call.index);",
    '  }',
    '  return out;',
    '}',
  ];
  return Array.from({ length: lines }, (_, i) => src[i % src.length]!).join('\n');
}

/**
 * The corpus: 18 steps of a coding agent working in this repository. Shapes (see
 * docs/benchmarks.md "Headline"): tool calls per step mostly 1, sometimes 2–4 (public traces of
 * Claude Code and Codex: 1.2 per step on average, p50 1, p90 2, p99 4 — SyFI TraceLab,
 * tracelab.cs.washington.edu); two text-only steps (the answer that ends a request); text before
 * the calls in most steps (as in the recorded Anthropic and OpenAI fixtures), between calls in
 * two and after the last call in one; small arguments for reads, searches and commands (30–150
 * characters), a few hundred tokens for edits; 40–550 output tokens per step (median output per
 * step across coding harnesses ~213 tokens: SemiAnalysis, tokenomics.info/cerebras).
 */
export const HEADLINE_TURNS: readonly HeadlineTurn[] = [
  { id: 'read-one', what: 'text, 1 read', segments: [t("I'll start with the turn controller to see where calls are released."), read('src/engine/controller.ts')] },
  { id: 'grep-one', what: 'text, 1 search', segments: [t('Let me find every caller of readyCallStart.'), grep('readyCallStart', 'src')] },
  { id: 'read-two', what: 'text, 2 reads', segments: [t('Both adapters matter here; reading them side by side.'), read('src/wire/anthropic.ts'), read('src/wire/openaiChat.ts')] },
  { id: 'git-log', what: 'text, git log', segments: [t('First, the recent history of the engine.'), bash('git log --oneline -20 -- src/engine', 'Recent engine commits')] },
  { id: 'git-diff', what: 'text, git diff', segments: [t('What changed in the last few commits?'), bash('git diff --stat HEAD~5', 'Files changed in the last five commits')] },
  {
    id: 'read-grep-read',
    what: 'plan, read, search, read',
    segments: [t(prose(45)), read('src/engine/runTurn.ts'), grep('earlyStart', 'src/engine'), read('src/execute/safety.ts')],
  },
  {
    id: 'edit',
    what: 'text, 1 edit (~40 lines)',
    segments: [t('I will tighten the barrier check in the release order.'), c('edit_file', { file_path: 'src/release/rules.ts', old_string: 'export function', new_string: code(40) })],
  },
  { id: 'test', what: 'text, a test run', segments: [t('Running the quick test to check the change.'), bash('node --test "$SLUICE_BENCH_TMP/smoke.test.mjs"', 'Run the smoke test')] },
  { id: 'answer', what: 'text only (answer, ~160 words)', segments: [t(prose(160))] },
  {
    id: 'fan-out',
    what: 'text, 4 reads',
    segments: [t('Reading the four wire adapters together.'), read('src/wire/anthropic.ts'), read('src/wire/openaiChat.ts'), read('src/wire/openaiResponses.ts'), read('src/wire/gemini.ts')],
  },
  {
    id: 'grep-text-read',
    what: 'text, search, text, read',
    segments: [t('Where is the completion evidence handled?'), grep('completion', 'src/wire', '*.ts'), t('And the controller side of it:'), read('src/engine/controller.ts')],
  },
  { id: 'ls', what: 'text, ls', segments: [t("Let me see what's in the wire folder."), bash('ls -la src/wire', 'List the wire adapters')] },
  {
    id: 'read-edit',
    what: 'text, read, edit (~25 lines)',
    segments: [t('Reading the test before changing it.'), read('test/engine/runTurn.test.ts'), c('edit_file', { file_path: 'test/engine/runTurn.test.ts', old_string: 'describe(', new_string: code(25) })],
  },
  { id: 'grep-glob', what: 'text, search with a glob', segments: [t('Checking the docs for the old flag name.'), grep('earlyStart', 'docs', '*.md')] },
  { id: 'status', what: 'git status, text after', segments: [bash('git status --short', 'Working tree status'), t('That shows the files I touched so far.')] },
  { id: 'short-answer', what: 'text only (~40 words)', segments: [t(prose(40))] },
  { id: 'read-long-plan', what: 'long plan, 1 read', segments: [t(prose(90)), read('docs/architecture.md')] },
  {
    id: 'read-read-log',
    what: 'text, 2 reads, git log',
    segments: [t('Comparing the journal and its store, then their history.'), read('src/journal/journal.ts'), read('src/journal/fileStore.ts'), bash('git log --oneline -10 -- src/journal', 'Journal history')],
  },
];

/** Turns of the `--quick` smoke run. */
export const QUICK_TURNS = ['read-one', 'read-grep-read', 'edit', 'fan-out', 'status'];

const TEXT_CHARS_PER_TOKEN = 4;
const ARGS_CHARS_PER_TOKEN = 3;

export function segmentTokens(s: Segment): number {
  if ('text' in s) return Math.max(1, Math.round(s.text.length / TEXT_CHARS_PER_TOKEN));
  return Math.max(1, Math.round((JSON.stringify(s.call.args).length + s.call.name.length) / ARGS_CHARS_PER_TOKEN));
}

export function turnTokens(turn: HeadlineTurn): number {
  return turn.segments.reduce((n, s) => n + segmentTokens(s), 0);
}

interface Timed {
  t: number;
  item: unknown;
}

/** Cut `text` into `n` pieces of nearly equal length (code points, so no surrogate pair is cut). */
function cut(text: string, n: number): string[] {
  const cps = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(cps.slice(Math.floor((i * cps.length) / n), Math.floor(((i + 1) * cps.length) / n)).join(''));
  return out.filter((p) => p.length > 0);
}

/** Deltas are at least this far apart: faster providers batch several tokens per chunk. */
const MIN_CHUNK_MS = 12;

/**
 * The turn as `profile.format`'s stream items with their times (ms after the first token): each
 * segment takes its tokens ÷ tokens/s, cut into deltas of about two tokens (at least
 * MIN_CHUNK_MS apart). Anthropic: a content block per segment, the tool_use block stopping after
 * its last argument delta; OpenAI Chat: content deltas and tool_calls deltas (no per-call
 * boundary: a call is complete at its closing byte); Gemini: a whole functionCall part when the
 * call's tokens have been generated.
 */
export function streamTimeline(turn: HeadlineTurn, profile: Profile): Timed[] {
  const out: Timed[] = [];
  const msPerToken = 1000 / profile.tokensPerSec;
  const push = (tm: number, item: unknown) => out.push({ t: tm, item });
  let now = 0;
  let block = 0;
  let callIndex = 0;
  const model = `bench-${profile.id}`;
  const chatChunk = (delta: unknown, finish: string | null = null) => ({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 0, model, choices: [{ index: 0, delta, finish_reason: finish }] });
  const gemini = (parts: unknown[], finishReason?: string) => ({ candidates: [{ content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}) }], modelVersion: model });
  /** Spread `pieces` over the segment's generation time; returns the times. */
  const times = (tokens: number): number[] => {
    const dur = tokens * msPerToken;
    const n = Math.max(1, Math.min(Math.ceil(tokens / 2), Math.floor(dur / MIN_CHUNK_MS)));
    const start = now;
    now += dur;
    return Array.from({ length: n }, (_, i) => start + (dur * (i + 1)) / n);
  };
  if (profile.format === 'anthropic') {
    push(0, { type: 'message_start', message: { id: 'msg_bench', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1000, output_tokens: 1 } } });
  } else if (profile.format === 'openai-chat') {
    push(0, chatChunk({ role: 'assistant', content: null }));
  }
  for (const seg of turn.segments) {
    const ts = times(segmentTokens(seg));
    if ('text' in seg) {
      const pieces = cut(seg.text, ts.length);
      if (profile.format === 'anthropic') {
        push(ts[0]! - 1, { type: 'content_block_start', index: block, content_block: { type: 'text', text: '' } });
        pieces.forEach((p, i) => push(ts[i]!, { type: 'content_block_delta', index: block, delta: { type: 'text_delta', text: p } }));
        push(ts[ts.length - 1]!, { type: 'content_block_stop', index: block++ });
      } else if (profile.format === 'openai-chat') {
        pieces.forEach((p, i) => push(ts[i]!, chatChunk({ content: p })));
      } else {
        pieces.forEach((p, i) => push(ts[i]!, gemini([{ text: p }])));
      }
      continue;
    }
    const { name, args } = seg.call;
    const id = `call_${turn.id}_${callIndex}`;
    const json = JSON.stringify(args);
    if (profile.format === 'gemini') {
      push(ts[ts.length - 1]!, gemini([{ functionCall: { name, args } }]));
    } else {
      // The first delta carries the id and the name; the arguments follow in the remaining ones.
      const pieces = cut(json, Math.max(1, ts.length - 1));
      const argTimes = ts.length > 1 ? ts.slice(1) : ts;
      if (profile.format === 'anthropic') {
        push(ts[0]!, { type: 'content_block_start', index: block, content_block: { type: 'tool_use', id, name, input: {} } });
        pieces.forEach((p, i) => push(argTimes[i]!, { type: 'content_block_delta', index: block, delta: { type: 'input_json_delta', partial_json: p } }));
        push(argTimes[argTimes.length - 1]!, { type: 'content_block_stop', index: block++ });
      } else {
        push(ts[0]!, chatChunk({ tool_calls: [{ index: callIndex, id, type: 'function', function: { name, arguments: '' } }] }));
        pieces.forEach((p, i) => push(argTimes[i]!, chatChunk({ tool_calls: [{ index: callIndex, function: { arguments: p } }] })));
      }
    }
    callIndex++;
  }
  const end = now + msPerToken;
  const finish = callIndex > 0;
  if (profile.format === 'anthropic') {
    push(end, { type: 'message_delta', delta: { stop_reason: finish ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: turnTokens(turn) } });
    push(end, { type: 'message_stop' });
  } else if (profile.format === 'openai-chat') {
    push(end, chatChunk({}, finish ? 'tool_calls' : 'stop'));
    push(end, { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 0, model, choices: [], usage: { prompt_tokens: 1000, completion_tokens: turnTokens(turn), total_tokens: 1000 + turnTokens(turn) } });
  } else {
    push(end, { ...gemini([{ text: '' }], 'STOP'), usageMetadata: { promptTokenCount: 1000, candidatesTokenCount: turnTokens(turn), totalTokenCount: 1000 + turnTokens(turn) } });
  }
  return out.map((x, i) => ({ ...x, i })).sort((a, b) => a.t - b.t || a.i - b.i).map(({ t: tm, item }) => ({ t: tm, item }));
}

/** The timeline as an async iterable paced on the real clock from `origin` (performance.now()). */
async function* paced(timeline: Timed[], origin: number): AsyncGenerator<unknown> {
  for (const x of timeline) {
    const wait = origin + x.t - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    yield x.item;
  }
}

const MAX_OUTPUT_CHARS = 30_000;

/** Run a program in `cwd`; resolves with its output (stdout, then stderr), rejects on a non-zero exit. */
function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, signal, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out.length < MAX_OUTPUT_CHARS ? (out += d) : undefined));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err.length < MAX_OUTPUT_CHARS ? (err += d) : undefined));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 || (cmd === 'git' && args[0] === 'grep' && code === 1) ? resolve(out + err) : reject(new Error(`${cmd} exited with ${code}`))));
  });
}

let hasRipgrep: boolean | undefined;
function ripgrepInstalled(): boolean {
  if (hasRipgrep === undefined) {
    hasRipgrep = (process.env.PATH ?? '').split(path.delimiter).some((d) => d && fs.existsSync(path.join(d, 'rg')));
  }
  return hasRipgrep;
}

/**
 * A coding agent's tools, really run on `repo`: read (numbered lines, as agents show them),
 * grep (ripgrep when installed, else `git grep`), bash (`bash -c` in the repository; sluice's
 * shell classifier decides which commands may start early), edit (applied to a copy of the file
 * under `tmp`, so the repository is never changed).
 */
export function agentTools(repo: string, tmp: string): AnyTool[] {
  const env = { ...process.env, SLUICE_BENCH_TMP: tmp, GIT_PAGER: 'cat', NO_COLOR: '1' };
  return [
    defineTool({
      name: 'read_file',
      kind: 'read',
      input: z.object({ file_path: z.string() }),
      async run({ file_path }) {
        const text = await fs.promises.readFile(path.resolve(repo, file_path), 'utf8');
        return text
          .split('\n')
          .slice(0, 2000)
          .map((l, i) => `${String(i + 1).padStart(6)}\t${l}`)
          .join('\n');
      },
    }),
    defineTool({
      name: 'grep',
      kind: 'search',
      input: z.object({ pattern: z.string(), path: z.string(), glob: z.string().optional() }),
      run({ pattern, path: p, glob }, ctx) {
        if (ripgrepInstalled()) return run('rg', ['-n', ...(glob ? ['--glob', glob] : []), '-e', pattern, p], repo, env, ctx.signal);
        return run('git', ['grep', '-n', '-e', pattern, '--', glob ? path.join(p, glob) : p], repo, env, ctx.signal);
      },
    }),
    defineTool({
      name: 'bash',
      kind: 'execute',
      input: z.object({ command: z.string(), description: z.string().optional() }),
      run({ command }, ctx) {
        return run('bash', ['-c', command], repo, env, ctx.signal);
      },
    }),
    defineTool({
      name: 'edit_file',
      kind: 'edit',
      input: z.object({ file_path: z.string(), old_string: z.string(), new_string: z.string() }),
      async run({ file_path, old_string, new_string }) {
        const text = await fs.promises.readFile(path.resolve(repo, file_path), 'utf8');
        const copy = path.join(tmp, 'edits', file_path);
        await fs.promises.mkdir(path.dirname(copy), { recursive: true });
        await fs.promises.writeFile(copy, text.includes(old_string) ? text.replace(old_string, new_string) : text + '\n' + new_string);
        return `edited ${file_path}`;
      },
    }),
  ];
}

export interface TurnRun {
  /** When the stream's last item was scheduled (ms after the first token). */
  scheduledEndMs: number;
  /** When sluice read the end of the stream. */
  streamMs: number;
  turnMs: number;
  calls: { name: string; completeMs: number; startedMs: number; resultMs: number }[];
}

export interface TurnResult {
  turn: string;
  profile: string;
  tokens: number;
  calls: number;
  /** Every round's runs. */
  early: TurnRun[];
  post: TurnRun[];
  /** Medians over the rounds: tails (last result − stream end), turn times (scheduled stream + tail). */
  earlyTailMs: number;
  postTailMs: number;
  earlyMs: number;
  postMs: number;
  streamMs: number;
  /** Stream end as read − as scheduled, median per mode. */
  earlyLagMs: number;
  postLagMs: number;
  savedMs: number;
  idealSavedMs: number;
  /** saving ÷ (time to first token + post-stream turn time). */
  share: number;
  /** completion → tool started, for the calls that started before the stream ended (early run). */
  dispatchMs: number[];
}

export interface HeadlineRow {
  profile: string;
  label: string;
  format: string;
  tokensPerSec: number;
  ttftMs: number;
  turns: number;
  postTurnP50Ms: number;
  earlyTurnP50Ms: number;
  /** Stream end lag (read − scheduled), median over the turns, per mode. */
  earlyLagP50Ms: number;
  postLagP50Ms: number;
  savedP50Ms: number;
  savedP90Ms: number;
  shareP50: number;
  shareP90: number;
  /** Σ saving ÷ Σ (TTFT + post-stream turn time) over the corpus. */
  shareAll: number;
  idealP50Ms: number;
  idealP90Ms: number;
  idealShareAll: number;
  /** Σ saving ÷ Σ ideal saving. */
  captured: number;
  dispatchP50Ms: number;
  dispatchMaxMs: number;
}

export interface HeadlineResult {
  rows: HeadlineRow[];
  turns: TurnResult[];
  corpus: { turns: number; callsPerTurn: Record<string, number>; tokensP50: number; tokensMin: number; tokensMax: number };
  grep: 'ripgrep' | 'git grep';
}

function timingsOf(calls: CallTiming[]): TurnRun['calls'] {
  return calls.map((x) => ({ name: x.name ?? '?', completeMs: x.completeMs ?? NaN, startedMs: x.startedMs ?? NaN, resultMs: x.resultMs ?? NaN }));
}

/** One turn through runTurn on the real clock; throws when a tool failed (the bench would measure nothing). */
export async function runOnce(turn: HeadlineTurn, profile: Profile, tools: AnyTool[], earlyStart: 'safe' | 'none'): Promise<TurnRun> {
  const timeline = streamTimeline(turn, profile);
  const origin = performance.now();
  const clock = {
    now: () => performance.now() - origin,
    setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms),
    clearTimeout: (h: unknown) => clearTimeout(h as NodeJS.Timeout),
  };
  const { summary } = await runTurn({ format: profile.format, stream: paced(timeline, origin), tools, clock, policy: { earlyStart, maxAttempts: 1 } });
  if (summary.outcome !== 'done') throw new Error(`turn ${turn.id} (${profile.id}, ${earlyStart}): outcome ${summary.outcome}${summary.error ? ` (${summary.error.type})` : ''}`);
  const failed = summary.calls.find((x) => x.result && !x.result.ok);
  if (failed) throw new Error(`turn ${turn.id}: tool ${failed.name ?? '?'} failed`);
  const calls = timingsOf(summary.calls);
  const streamMs = summary.streamEndMs ?? summary.turnDoneMs;
  const turnMs = calls.length ? Math.max(...calls.map((x) => x.resultMs)) : streamMs;
  return { scheduledEndMs: timeline[timeline.length - 1]!.t, streamMs, turnMs: Math.max(turnMs, streamMs), calls };
}

export interface HeadlineOptions {
  quick?: boolean;
  /** Runs of each turn per mode (default 2, quick 1); each turn's times are their medians. */
  rounds?: number;
  profiles?: string[];
  turns?: string[];
  repo?: string;
  log?: (s: string) => void;
}

function smokeTest(): string {
  return "import test from 'node:test';\nimport assert from 'node:assert';\ntest('release order', () => assert.deepStrictEqual([2, 0, 1].sort(), [0, 1, 2]));\n";
}

export async function benchHeadline(opts: HeadlineOptions = {}): Promise<HeadlineResult> {
  const repo = opts.repo ?? process.cwd();
  const log = opts.log ?? (() => undefined);
  const profiles = PROFILES.filter((p) => (opts.profiles ? opts.profiles.includes(p.id) : opts.quick ? p.id === 'flash' || p.id === 'wafer' : true));
  const wanted = opts.turns ?? (opts.quick ? QUICK_TURNS : undefined);
  const turns = HEADLINE_TURNS.filter((x) => !wanted || wanted.includes(x.id));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-headline-'));
  try {
    fs.writeFileSync(path.join(tmp, 'smoke.test.mjs'), smokeTest());
    const tools = agentTools(repo, tmp);
    // Warm-up: every turn once at the fastest profile (file cache, git's index, the shell parser, JIT).
    const warm = PROFILES.reduce((a, b) => (a.tokensPerSec > b.tokensPerSec ? a : b));
    for (const turn of turns) await runOnce(turn, { ...warm, format: 'anthropic' }, tools, 'safe');
    const results: TurnResult[] = [];
    const rounds = opts.rounds ?? (opts.quick ? 1 : 2);
    let flip = false;
    for (const profile of profiles) {
      log(`headline: ${profile.id} (${profile.tokensPerSec} tok/s)…\n`);
      for (const turn of turns) {
        const early: TurnRun[] = [];
        const post: TurnRun[] = [];
        for (let k = 0; k < rounds; k++) {
          flip = !flip;
          for (const mode of flip ? (['safe', 'none'] as const) : (['none', 'safe'] as const)) {
            const run = await runOnce(turn, profile, tools, mode);
            (mode === 'safe' ? early : post).push(run);
          }
        }
        const tail = (x: TurnRun) => x.turnMs - x.streamMs;
        const lag = (x: TurnRun) => x.streamMs - x.scheduledEndMs;
        const streamMs = early[0]!.scheduledEndMs;
        const earlyTailMs = median(early.map(tail));
        const postTailMs = median(post.map(tail));
        const postMs = profile.ttftMs + streamMs + postTailMs;
        const savedMs = postTailMs - earlyTailMs;
        results.push({
          turn: turn.id,
          profile: profile.id,
          tokens: turnTokens(turn),
          calls: early[0]!.calls.length,
          early,
          post,
          earlyTailMs,
          postTailMs,
          earlyMs: profile.ttftMs + streamMs + earlyTailMs,
          postMs,
          streamMs,
          earlyLagMs: median(early.map(lag)),
          postLagMs: median(post.map(lag)),
          savedMs,
          idealSavedMs: postTailMs,
          share: savedMs / postMs,
          dispatchMs: early.flatMap((e) => e.calls.filter((x) => x.startedMs < e.streamMs).map((x) => x.startedMs - x.completeMs)),
        });
      }
    }
    const rows = profiles.map((p) => summarize(p, results.filter((r) => r.profile === p.id)));
    const callsPerTurn: Record<string, number> = {};
    for (const turn of turns) {
      const n = turn.segments.filter((s) => 'call' in s).length;
      callsPerTurn[n] = (callsPerTurn[n] ?? 0) + 1;
    }
    const tokens = turns.map(turnTokens);
    return {
      rows,
      turns: results,
      corpus: { turns: turns.length, callsPerTurn, tokensP50: median(tokens), tokensMin: Math.min(...tokens), tokensMax: Math.max(...tokens) },
      grep: ripgrepInstalled() ? 'ripgrep' : 'git grep',
    };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

export function summarize(p: Profile, rs: TurnResult[]): HeadlineRow {
  const saved = rs.map((r) => r.savedMs);
  const ideal = rs.map((r) => r.idealSavedMs);
  const shares = rs.map((r) => r.share);
  const denom = rs.reduce((n, r) => n + r.postMs, 0);
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const dispatch = rs.flatMap((r) => r.dispatchMs);
  return {
    profile: p.id,
    label: p.label,
    format: p.format,
    tokensPerSec: p.tokensPerSec,
    ttftMs: p.ttftMs,
    turns: rs.length,
    postTurnP50Ms: median(rs.map((r) => r.postMs)),
    earlyTurnP50Ms: median(rs.map((r) => r.earlyMs)),
    earlyLagP50Ms: median(rs.map((r) => r.earlyLagMs)),
    postLagP50Ms: median(rs.map((r) => r.postLagMs)),
    savedP50Ms: median(saved),
    savedP90Ms: percentile(saved, 90),
    shareP50: median(shares),
    shareP90: percentile(shares, 90),
    shareAll: sum(saved) / denom,
    idealP50Ms: median(ideal),
    idealP90Ms: percentile(ideal, 90),
    idealShareAll: sum(ideal) / denom,
    captured: sum(ideal) > 0 ? sum(saved) / sum(ideal) : NaN,
    dispatchP50Ms: dispatch.length ? median(dispatch) : NaN,
    dispatchMaxMs: dispatch.length ? Math.max(...dispatch) : NaN,
  };
}

const ms = (x: number): string => (Number.isFinite(x) ? `${Math.round(x).toLocaleString('en-US')} ms` : '—');
const pct = (x: number): string => (Number.isFinite(x) ? `${(x * 100).toFixed(0)}%` : '—');

/** The headline table (README and docs/benchmarks.md). */
export function formatHeadline(r: HeadlineResult): string {
  const lines = [
    '| provider profile (output speed, first token) | turn, post-stream (median) | turn, early dispatch (median) | saved per turn, median / p90 | share of turn time, median / p90 / all turns | ideal: all tool time hidden, saving median / p90 (all turns) |',
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const x of r.rows) {
    lines.push(
      `| ${x.label} (${x.tokensPerSec.toLocaleString('en-US')} tok/s, ${(x.ttftMs / 1000).toFixed(2)} s) | ${ms(x.postTurnP50Ms)} | ${ms(x.earlyTurnP50Ms)} | ${ms(x.savedP50Ms)} / ${ms(x.savedP90Ms)} | ${pct(x.shareP50)} / ${pct(x.shareP90)} / ${pct(x.shareAll)} | ${ms(x.idealP50Ms)} / ${ms(x.idealP90Ms)} (${pct(x.idealShareAll)}) |`,
    );
  }
  return lines.join('\n') + '\n';
}

/** The corpus and dispatch lines under the table. */
export function formatHeadlineNotes(r: HeadlineResult): string {
  const dist = Object.entries(r.corpus.callsPerTurn)
    .map(([n, k]) => `${k} with ${n}`)
    .join(', ');
  const disp = r.rows.map((x) => `${x.profile} ${Number.isFinite(x.dispatchP50Ms) ? x.dispatchP50Ms.toFixed(1) : '—'} / ${Number.isFinite(x.dispatchMaxMs) ? x.dispatchMaxMs.toFixed(1) : '—'} ms`).join(', ');
  const cap = r.rows.map((x) => `${x.profile} ${pct(x.captured)}`).join(', ');
  const lag = r.rows.map((x) => `${x.profile} ${x.earlyLagP50Ms.toFixed(1)} / ${x.postLagP50Ms.toFixed(1)} ms`).join(', ');
  return (
    `Corpus: ${r.corpus.turns} agent steps (tool calls per step: ${dist}); ${r.corpus.tokensMin}–${r.corpus.tokensMax} output tokens per step, median ${r.corpus.tokensP50}; search tool: ${r.grep}. ` +
    `Early dispatch reached this share of the ideal saving (all turns): ${cap}. ` +
    `Completion → tool started for calls started during the stream, median / max: ${disp}. ` +
    `Stream end read after its scheduled time, median, early / post-stream: ${lag}.\n`
  );
}

/** Every turn of every profile (docs/benchmarks.md). */
export function formatHeadlineTurns(r: HeadlineResult): string {
  const lines = ['| profile | turn | calls | tokens | stream | tail after the stream, post-stream / early | saved |', '|---|---|---:|---:|---:|---:|---:|'];
  for (const x of r.turns) {
    lines.push(`| ${x.profile} | ${x.turn} | ${x.calls} | ${x.tokens} | ${ms(x.streamMs)} | ${ms(x.postTailMs)} / ${ms(x.earlyTailMs)} | ${ms(x.savedMs)} |`);
  }
  return lines.join('\n') + '\n';
}

if (require.main === module) {
  const argv = process.argv.slice(2);
  const rIdx = argv.indexOf('--rounds');
  benchHeadline({ quick: argv.includes('--quick'), ...(rIdx >= 0 ? { rounds: Number(argv[rIdx + 1]) } : {}), log: (s) => process.stderr.write(s) }).then(
    (r) => process.stdout.write(argv.includes('--json') ? JSON.stringify(r, null, 2) + '\n' : `${formatHeadline(r)}\n${formatHeadlineNotes(r)}\n${formatHeadlineTurns(r)}`),
    (err: unknown) => {
      process.stderr.write(`headline: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
