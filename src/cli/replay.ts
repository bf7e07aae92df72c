import { INSPECT_FLAGS, inspectionFromFlags } from './inspectFlags';
import { numberFlag, parseArgs, UsageError } from './args';
import { type Dispatch, type ReplayReport, replayTrace } from '../trace/replay';
import { parseToolSpecs, parseTrace, type SimToolSpec, TraceError, traceFormatMismatch } from '../trace/trace';
import type { WireFormat } from '../wire/events';
import { createAdapter, WIRE_FORMATS } from '../wire';
import { CliError, readInputText } from './input';

export const REPLAY_HELP = `sluice replay <trace> [options]

Runs a recorded or synthetic turn on a virtual clock (deterministic) with simulated tools, and
reports when each call was complete, released, started and resulted — under streaming dispatch,
under the classic post-stream scheduler, and against the ideal schedule.

<trace> is a .trace.jsonl file (SPEC §8: optional header {"sluice":"trace","format",…,"tools"},
then {"t":ms,"data":…} / {"t":ms,"error":{…}} / {"t":ms,"attempt":N} / {"t":ms,"end":true}),
or a raw provider recording (.sse, or one JSON payload per line), paced by --pace.

Options:
  --tools FILE           simulated tools: [{"name","kind","durationMs","result"|"error","needsApproval"?}]
                         (default: the trace header's "tools")
  --dispatch MODE        streaming (default) | post-stream
  --completion MODE      inferred (default) | evidence-only   (OpenAI-chat completion inference)
  --abort-at MS          a user abort at MS (virtual time)
  --on-abort MODE        commit (default) | drop
  --format FORMAT        anthropic | openai-chat | openai-responses | gemini | dynamo | text:<family>
                         (default: detected)
  --pace MS              spacing of payloads in raw .sse/.jsonl recordings (default 10)
  --realtime             replay in wall-clock time instead of virtual time
  --json                 print the full report as JSON (SPEC §8 fields)
  --timeline FILE        also write a timeline chart (.svg or .html): streaming against post-stream
  --journal FILE         write the turn's journal to FILE (a new file; finish it with sluice resume FILE)
  --crash-at MS          with --journal: kill this process (SIGKILL) at virtual time MS, leaving
                         exactly what a crash leaves in the journal (exit status 137)
  --inspect              serve the actors to the Stately inspector (local websocket relay, port 8080)
  --inspect-log FILE     record XState inspection events as JSONL (argument contents redacted)
  --inspect-contents     keep argument and result contents in inspection events
  -h, --help             this help

Environment:
  SLUICE_STREAMING_DISPATCH=0   same as --dispatch post-stream

Exit codes: 0 ok (invariants hold), 1 bad trace or an invariant violation, 2 usage error.
`;

const SPEC = {
  tools: { type: 'string' },
  dispatch: { type: 'string', choices: ['streaming', 'post-stream'] },
  completion: { type: 'string', choices: ['inferred', 'evidence-only'] },
  'abort-at': { type: 'string' },
  'on-abort': { type: 'string', choices: ['commit', 'drop'] },
  format: { type: 'string' },
  pace: { type: 'string' },
  realtime: { type: 'boolean' },
  json: { type: 'boolean' },
  timeline: { type: 'string' },
  journal: { type: 'string' },
  'crash-at': { type: 'string' },
  ...INSPECT_FLAGS,
  help: { type: 'boolean' },
} as const;

/** Simulated tool specs from a file (`--tools`), with a clear usage error for a bad file. */
export function readToolsFile(file: string): SimToolSpec[] {
  const text = readInputText(file); // regular files only, size-limited (src/cli/input.ts)
  try {
    return parseToolSpecs(text);
  } catch (err) {
    if (err instanceof TraceError) throw new UsageError(`${file}: ${err.message}`);
    throw err;
  }
}

export function readTraceFile(file: string, format?: string, pace?: number) {
  checkFormatFlag(format);
  return parseTraceText(file, readInputText(file), format, pace);
}

/** Parse a trace's text; a bad trace or an unknown format (header or flag) is a one-line usage error. */
export function parseTraceText(file: string, text: string, format?: string, pace?: number) {
  let trace: ReturnType<typeof parseTrace>;
  try {
    trace = parseTrace(text, { format: format as WireFormat | undefined, paceMs: pace });
  } catch (err) {
    if (err instanceof TraceError) throw new UsageError(`${file}: ${err.message}`);
    throw err;
  }
  const problem = formatProblem(trace.format);
  if (problem) throw new UsageError(`${file}: ${problem}`);
  // Payloads of another provider's shape than the format (header or --format): one line, exit 1.
  const mismatch = traceFormatMismatch(trace);
  if (mismatch !== undefined) throw new CliError(`${file}: ${mismatch}`);
  return trace;
}

/** `--format X`: a usage error unless sluice can read X. */
export function checkFormatFlag(format: string | undefined): void {
  const problem = format === undefined ? undefined : formatProblem(format);
  if (problem) throw new UsageError(`--format: ${problem}`);
}

/** Why sluice cannot read this wire format (one line), or undefined when it can. */
function formatProblem(format: string): string | undefined {
  try {
    createAdapter(format as WireFormat);
    return undefined;
  } catch {
    const known = [...WIRE_FORMATS, 'ai-sdk', 'text:<family>'].join(', ');
    return format.startsWith('text:')
      ? `unknown text family "${format.slice(5)}" (format ${JSON.stringify(format)})`
      : `unknown format ${JSON.stringify(format)} (expected one of: ${known})`;
  }
}

export async function run(argv: string[]): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(REPLAY_HELP);
    return 0;
  }
  const { positionals, flags } = parseArgs(argv, SPEC);
  if (positionals.length !== 1) throw new UsageError('expected exactly one trace file');
  const trace = readTraceFile(
    positionals[0]!,
    flags.format as string | undefined,
    numberFlag(flags.pace, 'pace'),
  );
  let tools = trace.tools;
  if (typeof flags.tools === 'string') tools = readToolsFile(flags.tools);
  let dispatch = (flags.dispatch as Dispatch | undefined) ?? 'streaming';
  if (process.env.SLUICE_STREAMING_DISPATCH === '0' && flags.dispatch === undefined) dispatch = 'post-stream';
  if (typeof flags.timeline === 'string' && !/\.(svg|html?)$/i.test(flags.timeline))
    throw new UsageError('--timeline must end in .svg or .html');
  const crashAtMs = numberFlag(flags['crash-at'], 'crash-at');
  if (crashAtMs !== undefined && typeof flags.journal !== 'string') throw new UsageError('--crash-at needs --journal FILE');
  const journal =
    typeof flags.journal === 'string'
      ? await (await import('./journalFile')).journalForReplay(flags.journal, { format: trace.format, dispatch, tools, crashAtMs })
      : undefined;
  const inspection = await inspectionFromFlags(flags);
  const options = {
    dispatch,
    completion: flags.completion as 'inferred' | 'evidence-only' | undefined,
    abortAtMs: numberFlag(flags['abort-at'], 'abort-at'),
    onAbort: flags['on-abort'] as 'commit' | 'drop' | undefined,
    tools,
    realtime: flags.realtime === true,
  };
  let report: ReplayReport;
  try {
    const observer = inspection?.observer;
    const { attachInspection } = await import('./inspect');
    report = await replayTrace(trace, {
      ...options,
      onController:
        observer || journal
          ? (c) => {
              journal?.attach(c);
              if (observer) attachInspection(c.actor, observer);
            }
          : undefined,
    });
    await journal?.close();
  } catch (err) {
    await inspection?.close();
    throw err;
  }
  if (typeof flags.timeline === 'string') {
    const { writeTimeline } = await import('./timeline');
    // The picture compares both schedules: replay the same trace under post-stream dispatch too.
    const post =
      report.dispatch === 'streaming' && options.abortAtMs === undefined
        ? await replayTrace(trace, { ...options, dispatch: 'post-stream', realtime: false })
        : undefined;
    writeTimeline(flags.timeline, report, post);
  }
  if (flags.json) process.stdout.write(JSON.stringify(report, null, 2) + '\n');
  else process.stdout.write(formatReport(report));
  await inspection?.close();
  // A resource limit ended the turn (docs/limits.md): the report shows it; exit 1 with one line.
  const limit = report.warnings.find((w) => w.code === 'limit_exceeded');
  if (limit) {
    process.stderr.write(`sluice replay: ${limit.message}; the turn was ended\n`);
    return 1;
  }
  return report.invariants.ok ? 0 : 1;
}

const ms = (v: number | undefined): string =>
  v === undefined ? '—' : `${Math.round(v).toLocaleString('en-US')} ms`;

/** The plain-text report: one line per call, then the totals. Never prints argument contents. */
export function formatReport(r: ReplayReport): string {
  const lines: string[] = [];
  lines.push(
    `format ${r.format} · dispatch ${r.dispatch} · completion ${r.completion} · outcome ${r.outcome}`,
  );
  // SPEC §12: a trace whose stream ended without its terminal event is a truncated turn, and says so.
  if (r.error !== undefined) lines.push(`error ${r.error.type}: ${r.error.message}`);
  lines.push('');
  lines.push('  call  name               state       complete    released    started     result');
  for (const c of r.calls) {
    lines.push(
      `  ${`#${c.index}${c.attempt > 1 ? `/a${c.attempt}` : ''}`.padEnd(5)} ${(c.name ?? '?').slice(0, 18).padEnd(18)} ${c.state.padEnd(11)} ${ms(c.completeMs).padEnd(11)} ${ms(c.releasedMs).padEnd(11)} ${ms(c.startedMs).padEnd(11)} ${ms(c.resultMs)}`,
    );
  }
  lines.push('');
  lines.push(`stream end   ${ms(r.streamEndMs)}`);
  lines.push(`turn done    ${ms(r.turnDoneMs)}`);
  if (r.postStreamMs !== undefined)
    lines.push(
      `post-stream  ${ms(r.postStreamMs)}   (the same turn if tools wait for the end of the stream)`,
    );
  if (r.idealMs !== undefined) lines.push(`ideal        ${ms(r.idealMs)}`);
  if (r.savedMs !== undefined && r.postStreamMs)
    lines.push(
      `saved        ${ms(r.savedMs)} (${((100 * r.savedMs) / r.postStreamMs).toFixed(0)}% of the post-stream turn)`,
    );
  for (const w of r.warnings) lines.push(`warning: ${w.code}: ${w.message}`);
  lines.push(
    r.invariants.ok ? 'invariants: ok' : `invariants: ${r.invariants.violations.length} violation(s)`,
  );
  for (const v of r.invariants.violations) lines.push(`  ${v.invariant}: ${v.message}`);
  return lines.join('\n') + '\n';
}
