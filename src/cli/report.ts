/**
 * `sluice report FILE|DIR…` — the rollout report (SPEC §11, §13): per kind (gateway, library),
 * provider format and model, turns, calls, the share of calls complete before the stream ended,
 * head start p50/p90, the median time saved per turn with its share and 95% interval, synthetic
 * results by reason, truncated backend streams, invariant violations, and a decision.
 */
import * as fs from 'node:fs';
import { journalKey } from '../journal/mac';
import { JournalError } from '../journal/records';
import { DEFAULT_THRESHOLDS, ReportBuilder, type Thresholds } from '../report/model';
import { readInputs, ReportInputError } from '../report/read';
import { renderHtml, renderJson, renderMarkdown, renderSvg, renderText } from '../report/render';
import { numberFlag, parseArgs, UsageError, type FlagSpec } from './args';

export const HELP = `sluice report — is early tool dispatch safe and worth it, per provider and model?

Usage: sluice report FILE|DIR... [--json | --text] [--chart out.svg|out.html]
                     [--min-turns N] [--min-saving-ms MS] [--min-share FRACTION] [--unchecked]

Reads what a deployment recorded (directories: every file in them, each directory and file once,
symbolic-link loops skipped with one warning; files are streamed line by line):
  - OTLP JSON trace files: ExportTraceServiceRequest JSON, one per file or one per line (what
    an OTLP/HTTP JSON receiver gets, or the OpenTelemetry Collector's file exporter writes).
    The gateway's request spans and the library's sluice.turn spans are turns.
  - sluice serve JSON logs (stderr): the "turn" records, with the A/B fields of
    sluice serve --release-holdout (arm, continues) for the gateway's saving.
  - sluice journals (runTurn({ journal }) / sluice replay --journal), read-only. A signed journal
    (MAC chain) is checked with SLUICE_JOURNAL_KEY and refused without it (see --unchecked).
A request recorded both in the logs and as a span counts once.

Prints a Markdown table, one row per kind (gateway | library), provider format and model:
  turns, retried, aborted   turns; with more than one attempt; aborted by the user/client
  failed                    turns whose (last) stream did not end normally (error, reset, abort)
  truncated                 turns whose backend stream was cut short or was not a stream
                            (stream_truncated / bad_stream)
  calls                     released tool calls (last attempt)
  early                     share of calls complete ≥ 50 ms before their stream ended
  head start p50 / p90      how much of a call's work was done while the stream still ran:
                            gateway: stream end − release; library: the part of the tool's run
                            that overlapped the stream (shadow: with the projected start)
  saved/turn                median time saved per turn — library: measured (real) or projected
                            (shadow); gateway: A/B, median gap before the client's next request,
                            holdout arm − early arm (ab)
  share                     the saving ÷ the turn's duration without early dispatch
  95% interval              bootstrap interval of saved/turn (fixed seed: same input, same numbers)
  synthetic                 results sluice made up, by reason
  violations                SPEC §7 invariant violations (must be 0)
  decision, reason          no-go (any violation) | more-data (too few turns, or a material
                            saving whose interval reaches 0) | keep-off (saving under the bar)
                            | enable (clear, material saving and 0 violations)

Options:
  --json                    the report as JSON instead of the table
  --text                    a plain aligned text table (same columns) instead of Markdown
  --chart FILE              also write a chart of the saving per row: .svg, or .html (chart and
                            table in one page)
  --min-turns N             turns with a measured saving (gateway: per arm) before a row is
                            decided (default ${DEFAULT_THRESHOLDS.minTurns})
  --min-saving-ms MS        smallest median saving per turn that matters (default ${DEFAULT_THRESHOLDS.minSavingMs})
  --min-share FRACTION      smallest saving as a share of the turn, 0–1 (default ${DEFAULT_THRESHOLDS.minShare})
  --unchecked               read signed journals without SLUICE_JOURNAL_KEY, unchecked
  --help                    this text

Exit codes: 0 report printed (also NO-GO: read the decisions), 2 usage error or unreadable input.
`;

const SPEC: Record<string, FlagSpec> = {
  json: { type: 'boolean' },
  text: { type: 'boolean' },
  chart: { type: 'string' },
  'min-turns': { type: 'string' },
  'min-saving-ms': { type: 'string' },
  'min-share': { type: 'string' },
  unchecked: { type: 'boolean' },
  help: { type: 'boolean' },
};

function thresholdsOf(flags: Record<string, string | boolean | undefined>): Thresholds {
  const minTurns = numberFlag(flags['min-turns'], 'min-turns', DEFAULT_THRESHOLDS.minTurns)!;
  if (!Number.isInteger(minTurns) || minTurns < 1) throw new UsageError('--min-turns must be a whole number ≥ 1');
  const minShare = numberFlag(flags['min-share'], 'min-share', DEFAULT_THRESHOLDS.minShare)!;
  if (minShare > 1) throw new UsageError('--min-share is a fraction from 0 to 1 (e.g. 0.05 for 5%)');
  return { minTurns, minSavingMs: numberFlag(flags['min-saving-ms'], 'min-saving-ms', DEFAULT_THRESHOLDS.minSavingMs)!, minShare };
}

export async function run(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgs(argv, SPEC);
  if (flags.help === true) {
    process.stdout.write(HELP);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError('give at least one file or directory to read');
  if (flags.json === true && flags.text === true) throw new UsageError('--json and --text: choose one');
  const chart = typeof flags.chart === 'string' ? flags.chart : undefined;
  if (chart !== undefined && !/\.(svg|html?)$/i.test(chart)) throw new UsageError('--chart must name an .svg or .html file');
  const th = thresholdsOf(flags);
  let key: Buffer | undefined;
  try {
    key = journalKey();
  } catch (e) {
    if (e instanceof JournalError) throw new UsageError(e.message);
    throw e;
  }
  const builder = new ReportBuilder();
  let read;
  try {
    read = readInputs(positionals, builder, { ...(key ? { journalKey: key } : {}), verify: flags.unchecked === true ? 'skip' : 'check' });
  } catch (e) {
    if (e instanceof ReportInputError) throw new UsageError(e.message);
    throw e;
  }
  const rep = builder.build(read.inputs, th);
  for (const w of read.warnings) process.stderr.write(`sluice report: ${w}\n`);
  for (const s of read.skipped) process.stderr.write(`sluice report: ${s.file}: skipped ${s.lines} unreadable line${s.lines === 1 ? '' : 's'}\n`);
  if (chart !== undefined) {
    try {
      fs.writeFileSync(chart, /\.svg$/i.test(chart) ? renderSvg(rep) : renderHtml(rep));
    } catch (e) {
      throw new UsageError(`--chart ${chart}: cannot be written (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  process.stdout.write(flags.json === true ? renderJson(rep) : flags.text === true ? renderText(rep) : renderMarkdown(rep));
  return 0;
}
