import { parseArgs, UsageError } from './args';
import { formatReport, readToolsFile } from './replay';
import { INSPECT_FLAGS, inspectionFromFlags } from './inspectFlags';
import { checkInputFile } from './input';
import { openJournalFile } from './journalFile';
import type { CallResult } from '../calls';
import { settleMicrotasks, VirtualClock } from '../engine/clock';
import type { TurnController } from '../engine/controller';
import { ResumeError, resumeTurn, type ResumedCall } from '../engine/resume';
import { JournalRefusedError } from '../journal/check';
import { JournalError, type ResumedHow } from '../journal/records';
import { foldJournal } from '../journal/state';
import { type ReplayReport, type ReportCall, reportCall, simClassifier } from '../trace/replay';
import type { SimToolSpec } from '../trace/trace';

export const RESUME_HELP = `sluice resume <journal> [options]

Finishes a journaled turn after a crash (a journal written by \`sluice replay --journal FILE\`,
possibly stopped by --crash-at): rebuilds the turn from the journal and runs what is left with
simulated tools on a virtual clock. Recorded results are kept, never re-run; safe calls without a
result run again; an unsafe call that started without a recorded result is not run again: it gets
an "outcome unknown" result. Prints the replay report plus, per call, how it was resumed:
kept | rerun | unknown-outcome | reconciled. Times are virtual ms since the resume began.

Options:
  --tools FILE           simulated tools (default: the ones the journal was written with)
  --json                 print the full report as JSON
  --unchecked            read a signed journal without SLUICE_JOURNAL_KEY, its MAC chain unchecked
  --inspect              serve the actors to the Stately inspector (local websocket relay, port 8080)
  --inspect-log FILE     record XState inspection events as JSONL (argument contents redacted)
  --inspect-contents     keep argument and result contents in inspection events
  -h, --help             this help

The journal is checked before anything runs: its header must name this turn (the file name),
every record must fit the turn's lifecycle, and with SLUICE_JOURNAL_KEY set every record's MAC
must verify. A signed journal (one with a MAC chain) is refused without the key unless
--unchecked says to read it unchecked. A refused journal is one line naming the record; --json then prints the results it
recorded before that record ({"refused": …, "kept": […]}).

Input rules as for replay: a regular file within SLUICE_MAX_INPUT_BYTES (a directory, FIFO or
device is a usage error). Environment: SLUICE_JOURNAL_KEY (MAC key, ≥ 16 bytes),
SLUICE_LEASE_TTL_MS (lease time to live, default 60000).

Exit codes: 0 ok (invariants hold), 1 bad/corrupt/refused journal, turn locked by another worker,
store failure, or an invariant violation, 2 usage error.
`;

const SPEC = {
  tools: { type: 'string' },
  json: { type: 'boolean' },
  unchecked: { type: 'boolean' },
  ...INSPECT_FLAGS,
  help: { type: 'boolean' },
} as const;

export interface ResumeReport extends ReplayReport {
  journal: string;
  /** Journal time when the resume began; the report's times are counted from there. */
  resumedAtMs: number;
  /** The journal was already committed: the turn was read back, nothing ran. */
  alreadyCommitted: boolean;
  calls: Array<ReportCall & { resumed?: ResumedHow }>;
}

/** Simulated tools on a virtual clock (`durationMs`, then `result` or `error`). */
function simRunner(tools: SimToolSpec[] | undefined, clock: VirtualClock) {
  const byName = new Map((tools ?? []).map((t) => [t.name, t]));
  return (call: { name: string }, signal: AbortSignal): Promise<CallResult> =>
    new Promise((resolve) => {
      const spec = byName.get(call.name);
      const h = clock.setTimeout(() => resolve(spec?.error !== undefined ? { ok: false, content: spec.error } : { ok: true, content: spec?.result ?? 'ok' }), spec?.durationMs ?? 0);
      signal.addEventListener('abort', () => clock.clearTimeout(h), { once: true });
    });
}

/** Advance the virtual clock timer by timer until the turn is done. */
function drive(c: TurnController, clock: VirtualClock): void {
  let done = false;
  void c.done.then(() => (done = true));
  void (async () => {
    let idle = 0;
    while (!done) {
      await settleMicrotasks();
      if (done) break;
      const t = clock.nextTimerAt();
      if (t === undefined) {
        if (++idle > 100) {
          c.abort('commit'); // nothing left that could move the turn on
          return;
        }
        continue;
      }
      idle = 0;
      clock.advanceTo(t);
    }
  })();
}

export async function run(argv: string[]): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(RESUME_HELP);
    return 0;
  }
  const { positionals, flags } = parseArgs(argv, SPEC);
  if (positionals.length !== 1) throw new UsageError('expected exactly one journal file');
  const file = positionals[0]!;
  checkInputFile(file); // regular files only, size limit (src/cli/input.ts): exit 2 / 1, one line
  const { store, turn } = openJournalFile(file);
  let records;
  try {
    records = (await store.read(turn)).records;
  } catch (err) {
    if (err instanceof JournalError) {
      process.stderr.write(`sluice resume: ${file}: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  const header = foldJournal(records).header;
  if (!header) {
    process.stderr.write(`sluice resume: ${file}: not a sluice journal (no header record)\n`);
    return 1;
  }
  const metaTools = Array.isArray(header.meta?.tools) ? (header.meta.tools as SimToolSpec[]) : undefined;
  const tools = typeof flags.tools === 'string' ? readToolsFile(flags.tools) : metaTools;
  const clock = new VirtualClock();
  const inspection = await inspectionFromFlags(flags);
  const { attachInspection } = await import('./inspect');
  let out;
  try {
    out = await resumeTurn({
      store,
      turn,
      clock,
      classify: simClassifier(tools),
      runTool: simRunner(tools, clock),
      verify: flags.unchecked === true ? 'skip' : 'check',
      onController: (c) => {
        if (inspection?.observer) attachInspection(c.actor, inspection.observer);
        drive(c, clock);
      },
    });
  } catch (err) {
    await inspection?.close();
    if (err instanceof JournalRefusedError && flags.json) {
      const kept = err.kept.map((k) => ({ attempt: k.attempt, index: k.index, id: k.id, name: k.name, ok: k.ok, content: k.content, ...(k.synthetic ? { synthetic: k.synthetic } : {}) }));
      process.stdout.write(JSON.stringify({ journal: file, refused: { record: err.record, reason: err.reason }, kept }, null, 2) + '\n');
    }
    if (err instanceof ResumeError || err instanceof JournalError) {
      process.stderr.write(`sluice resume: ${file}: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    await store.close();
  }
  await inspection?.close();
  const s = out.summary;
  const byName = new Map((tools ?? []).map((t) => [t.name, t]));
  const how = new Map<number, ResumedCall>(out.resumed.map((r) => [r.index, r]));
  const report: ResumeReport = {
    journal: file,
    resumedAtMs: out.resumedAtMs,
    alreadyCommitted: out.alreadyCommitted,
    format: header.format ?? 'anthropic',
    dispatch: header.earlyStart === 'none' ? 'post-stream' : 'streaming',
    completion: 'inferred',
    outcome: s.outcome,
    attempts: s.attempts + out.attemptBase - 1,
    streamEndMs: s.streamEndMs,
    turnDoneMs: s.turnDoneMs,
    calls: s.calls.map((c) => {
      const r = how.get(c.index);
      return { ...reportCall(c, byName, out.attemptBase), ...(r ? { resumed: r.resumed } : {}) };
    }),
    history: out.messages,
    warnings: s.warnings,
    invariants: { ok: out.violations.length === 0, violations: out.violations },
  };
  if (flags.json) process.stdout.write(JSON.stringify(report, null, 2) + '\n');
  else process.stdout.write(formatResumeReport(report));
  return report.invariants.ok ? 0 : 1;
}

export function formatResumeReport(r: ResumeReport): string {
  const head = r.alreadyCommitted
    ? `${r.journal}: the turn was already committed; read back, nothing ran\n`
    : `resumed ${r.journal} at ${Math.round(r.resumedAtMs).toLocaleString('en-US')} ms (journal time)\n`;
  const per = r.calls.filter((c) => c.resumed).map((c) => `  #${c.index} ${(c.name ?? '?').slice(0, 18).padEnd(18)} ${c.resumed}`);
  return head + formatReport(r) + (per.length ? `resumed calls:\n${per.join('\n')}\n` : '');
}

