import * as fs from 'node:fs';
import * as path from 'node:path';
import { Walker, WalkError } from '../walk';
import { numberFlag, parseArgs, UsageError } from './args';
import { checkFormatFlag, parseTraceText, readToolsFile, readTraceFile } from './replay';
import { CliError, readInputText, statInput } from './input';
import { replayTrace, type ReplayReport } from '../trace/replay';
import { parseTrace, type SimToolSpec, type Trace, TraceError, traceFormatMismatch } from '../trace/trace';
import type { WireFormat } from '../wire/events';

export const ANALYZE_HELP = `sluice analyze <trace|dir>... [options]

How early each tool call became complete relative to the end of the stream — the head start
that early dispatch (and the gateway's early tool_use release) can use — and what sluice saves
with the given tools, against the same turn under post-stream dispatch.

Inputs: .trace.jsonl (timed; SPEC §8), raw recordings (.sse, one payload per line .jsonl, and
Dynamo raw-model-stream .json with "input_stream"), paced --pace ms per payload because they
carry no timing. Directories are searched for such files.

Options:
  --tools FILE        simulated tools [{"name","kind","durationMs",…}] (default: the trace header's)
  --tool-ms MS        without tool specs, treat every call as a read-only tool taking MS (default 1000)
  --pace MS           spacing of payloads in untimed recordings (default 10)
  --format FORMAT     wire format (default: detected)
  --completion MODE   inferred (default) | evidence-only   (OpenAI-chat completion inference)
  --json              one JSON object per input (calls, head starts, savings)
  --markdown          print the summary as a Markdown table (for docs)
  -h, --help          this help

Exit codes: 0 every input analyzed; 1 an input could not be analyzed (reported in its row and
on stderr) or a directory held no trace files; 2 usage error. Inputs are regular files only,
at most SLUICE_MAX_INPUT_BYTES (default 256 MiB) each.
`;

const SPEC = {
  tools: { type: 'string' },
  'tool-ms': { type: 'string' },
  pace: { type: 'string' },
  format: { type: 'string' },
  completion: { type: 'string', choices: ['inferred', 'evidence-only'] },
  json: { type: 'boolean' },
  markdown: { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

export interface CallHeadStart {
  index: number;
  name?: string;
  kind?: string;
  completeMs?: number;
  releasedMs?: number;
  /** streamEndMs − completeMs: how long before the end of the stream the call was complete. */
  headStartMs?: number;
  /** headStartMs as a share of the stream's duration (0–1). */
  headStartShare?: number;
  /** Payloads (chunks) that arrived after the call was complete: the head start in pace-free units. */
  chunksAfter?: number;
}

export interface Analysis {
  file: string;
  format?: string;
  error?: string;
  /** How timing was obtained: 'timed' (trace t values) or 'paced' (N ms per payload). */
  timing?: 'timed' | `paced ${number} ms`;
  /** Where the tool durations came from. */
  tools?: 'trace' | 'file' | `assumed read ${number} ms`;
  chunks?: number;
  streamEndMs?: number;
  calls: CallHeadStart[];
  turnDoneMs?: number;
  postStreamMs?: number;
  idealMs?: number;
  savedMs?: number;
  outcome?: string;
  /** The turn's error type when it failed (`stream_truncated`: the recording ended without its terminal event, SPEC §12). */
  failure?: string;
}

const INPUT_RE = /\.(trace\.jsonl|jsonl|sse|json|txt)$/i;

/**
 * Files to analyze: the given files, and matching files under given directories (src/walk.ts:
 * each directory and file once by device and inode, symlink loops skipped with one warning on
 * stderr, sorted).
 */
export function collectInputs(args: string[], warn: (line: string) => void = (l) => process.stderr.write(`sluice analyze: ${l}\n`)): string[] {
  const walker = new Walker({
    skip: (name) => name === 'node_modules',
    // Only regular files: a FIFO or device in a directory is skipped, never opened.
    accept: (name, file) => INPUT_RE.test(name) && (!/\.json$/i.test(name) || isStreamJson(file)),
  });
  for (const a of args) {
    if (!fs.existsSync(a)) throw new UsageError(`no such file or directory: ${a}`);
    if (statInput(a).isDirectory()) {
      if (walker.walked(a)) continue; // named twice, or inside a directory named before: its files are in
      let added: number;
      try {
        added = walker.add(a);
      } catch (err) {
        if (err instanceof WalkError) throw new CliError(err.message);
        throw err;
      }
      if (added === 0) throw new CliError(`${a}: no trace files (.trace.jsonl, .jsonl, .sse, .json, .txt) in this directory`);
    } else walker.files.push(a); // a named file is read (and checked) like every input
  }
  const w = walker.warning();
  if (w !== undefined) warn(w);
  return walker.files;
}

/** In a directory, a `.json` file is a recording only when it is a Dynamo raw stream (not package.json). */
function isStreamJson(file: string): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch {
    return false;
  }
  try {
    const buf = Buffer.alloc(4096);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).toString('utf8').includes('"input_stream"');
  } finally {
    fs.closeSync(fd);
  }
}

/** Dynamo raw-model-stream JSON ({input_stream:[{data: chunk}]}) → one payload per line. */
function dynamoRawToLines(text: string): string | undefined {
  if (!text.trimStart().startsWith('{')) return undefined;
  try {
    const v = JSON.parse(text) as { input_stream?: Array<{ data?: unknown }> };
    if (!Array.isArray(v.input_stream)) return undefined;
    return v.input_stream.map((x) => JSON.stringify(x.data ?? x)).join('\n') + '\n';
  } catch {
    return undefined;
  }
}

function loadTrace(file: string, format: string | undefined, pace: number): Trace {
  if (/\.json$/i.test(file)) {
    const text = readInputText(file);
    const lines = dynamoRawToLines(text);
    if (lines !== undefined) {
      const trace = parseTrace(lines, { format: (format as WireFormat | undefined) ?? 'openai-chat', paceMs: pace });
      const mismatch = traceFormatMismatch(trace);
      if (mismatch !== undefined) throw new CliError(`${file}: ${mismatch}`);
      return trace;
    }
    return parseTraceText(file, text, format, pace);
  }
  return readTraceFile(file, format, pace);
}

export interface AnalyzeOptions {
  tools?: SimToolSpec[];
  toolMs?: number;
  pace?: number;
  completion?: 'inferred' | 'evidence-only';
}

export async function analyzeTrace(trace: Trace, opts: AnalyzeOptions = {}): Promise<Omit<Analysis, 'file'>> {
  let tools = opts.tools ?? trace.tools;
  let toolsFrom: Analysis['tools'] = opts.tools ? 'file' : 'trace';
  const assumed = tools === undefined;
  const toolMs = opts.toolMs ?? 1000;
  // Without specs, every call name is a read-only tool of toolMs (so the savings are comparable).
  const report: ReplayReport = await (async () => {
    const completion = opts.completion;
    if (!assumed) return replayTrace(trace, { tools, completion });
    const first = await replayTrace(trace, { mode: 'gateway', completion });
    const names = [...new Set(first.calls.map((c) => c.name).filter((n): n is string => !!n))];
    tools = names.map((name) => ({ name, kind: 'read', durationMs: toolMs }));
    toolsFrom = `assumed read ${toolMs} ms`;
    return replayTrace(trace, { tools, completion });
  })();
  const lastAttempt = Math.max(1, ...report.calls.map((c) => c.attempt));
  const lines = trace.attempts[Math.min(trace.attempts.length, lastAttempt) - 1]?.lines ?? [];
  const end = report.streamEndMs;
  const start = trace.attempts[Math.min(trace.attempts.length, lastAttempt) - 1]?.startMs ?? 0;
  const duration = end !== undefined ? end - start : undefined;
  const calls: CallHeadStart[] = report.calls
    .filter((c) => c.attempt === lastAttempt)
    .map((c) => {
      const head = end !== undefined && c.completeMs !== undefined ? end - c.completeMs : undefined;
      return {
        index: c.index,
        name: c.name,
        kind: c.kind,
        completeMs: c.completeMs,
        releasedMs: c.releasedMs,
        headStartMs: head,
        headStartShare: head !== undefined && duration ? head / duration : undefined,
        chunksAfter: c.completeMs !== undefined ? lines.filter((l) => l.t > c.completeMs!).length : undefined,
      };
    });
  return {
    format: report.format,
    timing: trace.source === 'trace' ? 'timed' : `paced ${opts.pace ?? 10} ms`,
    tools: toolsFrom,
    chunks: lines.length,
    streamEndMs: report.streamEndMs,
    calls,
    turnDoneMs: report.turnDoneMs,
    postStreamMs: report.postStreamMs,
    idealMs: report.idealMs,
    savedMs: report.savedMs,
    outcome: report.outcome,
    ...(report.error !== undefined ? { failure: report.error.type } : {}),
  };
}

const ms = (v: number | undefined): string =>
  v === undefined ? '—' : `${Math.round(v).toLocaleString('en-US')} ms`;
const pct = (v: number | undefined): string => (v === undefined ? '—' : `${Math.round(v * 100)}%`);

export function formatAnalysis(a: Analysis): string {
  const out: string[] = [`${a.file}`];
  if (a.error) return `${a.file}\n  cannot analyze: ${a.error}\n`;
  out.push(
    `  format ${a.format} · ${a.timing} timing · ${a.chunks} chunks · stream end ${ms(a.streamEndMs)} · tools: ${a.tools}`,
  );
  if (a.failure !== undefined) out.push(`  turn failed: ${a.failure}${a.failure === 'stream_truncated' ? ' (the recording ends without its terminal event)' : ''}`);
  if (a.calls.length === 0) {
    out.push('  no tool calls');
    return out.join('\n') + '\n';
  }
  out.push('  call  name                complete     head start   of stream   chunks after');
  for (const c of a.calls) {
    out.push(
      `  #${String(c.index).padEnd(4)} ${(c.name ?? '?').slice(0, 18).padEnd(18)}  ${ms(c.completeMs).padStart(9)}  ${ms(c.headStartMs).padStart(11)}  ${pct(c.headStartShare).padStart(9)}  ${String(c.chunksAfter ?? '—').padStart(12)}`,
    );
  }
  const saved =
    a.savedMs !== undefined && a.postStreamMs
      ? ` (${pct(a.savedMs / a.postStreamMs)} of the post-stream turn)`
      : '';
  out.push(
    `  turn: streaming ${ms(a.turnDoneMs)} · post-stream ${ms(a.postStreamMs)} · ideal ${ms(a.idealMs)} · saved ${ms(a.savedMs)}${saved}`,
  );
  return out.join('\n') + '\n';
}

/** One Markdown row per input (the docs table). */
export function markdownTable(rows: Analysis[], base?: string): string {
  const out = [
    '| input | format | calls | first call complete | head start (max) | of stream (max) | chunks after (max) | post-stream | streaming | saved |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const a of rows) {
    const name = base ? path.relative(base, a.file) : a.file;
    if (a.error) {
      out.push(
        `| \`${name}\` | — | — | — | — | — | — | — | — | cannot analyze: ${a.error.replace(/\|/g, '\\|')} |`,
      );
      continue;
    }
    const maxOf = (f: (c: CallHeadStart) => number | undefined): number | undefined => {
      const xs = a.calls.map(f).filter((x): x is number => x !== undefined);
      return xs.length ? Math.max(...xs) : undefined;
    };
    const first = a.calls.length ? Math.min(...a.calls.map((c) => c.completeMs ?? Infinity)) : undefined;
    const saved =
      a.savedMs !== undefined && a.postStreamMs
        ? `${ms(a.savedMs)} (${pct(a.savedMs / a.postStreamMs)})`
        : ms(a.savedMs);
    out.push(
      `| \`${name}\` | ${a.format} | ${a.calls.length} | ${first === undefined || !Number.isFinite(first) ? '—' : ms(first)} | ${ms(maxOf((c) => c.headStartMs))} | ${pct(maxOf((c) => c.headStartShare))} | ${maxOf((c) => c.chunksAfter) ?? '—'} | ${ms(a.postStreamMs)} | ${ms(a.turnDoneMs)} | ${a.calls.length ? saved : '—'} |`,
    );
  }
  return out.join('\n') + '\n';
}

export async function run(argv: string[]): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(ANALYZE_HELP);
    return 0;
  }
  const { positionals, flags } = parseArgs(argv, SPEC);
  if (positionals.length === 0) throw new UsageError('expected at least one trace file or directory');
  const pace = numberFlag(flags.pace, 'pace', 10)!;
  const toolMs = numberFlag(flags['tool-ms'], 'tool-ms', 1000)!;
  let tools: SimToolSpec[] | undefined;
  if (typeof flags.tools === 'string') tools = readToolsFile(flags.tools);
  const format = flags.format as string | undefined;
  // Open-model text formats need the text parsers (they register themselves when loaded).
  if (format?.startsWith('text:')) await import('../parsers');
  checkFormatFlag(format);
  const files = collectInputs(positionals);
  const rows: Analysis[] = [];
  for (const file of files) {
    try {
      const trace = loadTrace(file, format, pace);
      const completion = flags.completion as AnalyzeOptions['completion'];
      rows.push({ file, ...(await analyzeTrace(trace, { tools, toolMs, pace, completion })) });
    } catch (err) {
      if (!(err instanceof UsageError || err instanceof TraceError || err instanceof Error)) throw err;
      rows.push({ file, calls: [], error: err.message.replace(`${file}: `, '') });
    }
  }
  if (flags.json) process.stdout.write(rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  else if (flags.markdown) process.stdout.write(markdownTable(rows));
  else process.stdout.write(rows.map(formatAnalysis).join('\n'));
  const failed = rows.filter((r) => r.error !== undefined);
  for (const r of failed) process.stderr.write(`sluice analyze: ${r.error!.startsWith(r.file) ? '' : `${r.file}: `}${r.error}\n`);
  return failed.length > 0 ? 1 : 0;
}
