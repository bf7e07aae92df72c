/**
 * `sluice report FILE|DIR…` — the rollout report (SPEC §11): per provider format and model,
 * turns, calls, the share of calls complete before the stream ended, head start p50/p90, time
 * saved (real or shadow-projected), synthetic results by reason, invariant violations.
 */
import * as fs from 'node:fs';
import { summarize } from '../report/model';
import { readInputs, ReportInputError } from '../report/read';
import { renderHtml, renderJson, renderMarkdown, renderSvg } from '../report/render';
import { parseArgs, UsageError, type FlagSpec } from './args';

export const HELP = `sluice report — is early tool dispatch safe and worth it, per provider and model?

Usage: sluice report FILE|DIR... [--json] [--chart out.svg|out.html]

Reads what a deployment recorded (directories: every file in them):
  - OTLP JSON trace files: ExportTraceServiceRequest JSON, one per file or one per line (what
    an OTLP/HTTP JSON receiver gets, or the OpenTelemetry Collector's file exporter writes).
    The gateway's request spans and the library's sluice.turn spans are turns.
  - sluice serve JSON logs (stderr): the "turn" records.
  - sluice journals (runTurn({ journal }) / sluice replay --journal), read-only.
A request recorded both in the logs and as a span counts once.

Prints a Markdown table, one row per provider format and model:
  turns, retried, aborted   turns; with more than one attempt; aborted by the user/client
  failed                    turns whose (last) stream did not end normally (error, reset, abort)
  calls                     released tool calls (last attempt)
  early                     share of calls complete ≥ 50 ms before their stream ended
  head start p50 / p90      how long before the end of the stream a call was out of its way:
                            gateway: stream end − release; library: stream end − result
                            (shadow: with the projected start)
  time saved                per turn, library/journal turns: the post-stream projection − the
                            real end (real), or shadowSavedMs (shadow); n/a for the gateway
  synthetic                 results sluice made up, by reason
  violations                SPEC §7 invariant violations — the go/no-go line (must be 0)

Options:
  --json                    the report as JSON instead of the table
  --chart FILE              also write a chart of the head start per row: .svg, or .html (chart
                            and table in one page)
  --help                    this text

Exit codes: 0 report printed (also NO-GO: read the last line), 2 usage error or unreadable input.
`;

const SPEC: Record<string, FlagSpec> = {
  json: { type: 'boolean' },
  chart: { type: 'string' },
  help: { type: 'boolean' },
};

export async function run(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgs(argv, SPEC);
  if (flags.help === true) {
    process.stdout.write(HELP);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError('give at least one file or directory to read');
  const chart = typeof flags.chart === 'string' ? flags.chart : undefined;
  if (chart !== undefined && !/\.(svg|html?)$/i.test(chart)) throw new UsageError('--chart must name an .svg or .html file');
  let read;
  try {
    read = readInputs(positionals);
  } catch (e) {
    if (e instanceof ReportInputError) throw new UsageError(e.message);
    throw e;
  }
  const rep = summarize(read.turns, read.inputs);
  for (const s of read.skipped) process.stderr.write(`sluice report: ${s.file}: skipped ${s.lines} unreadable line${s.lines === 1 ? '' : 's'}\n`);
  if (chart !== undefined) {
    try {
      fs.writeFileSync(chart, /\.svg$/i.test(chart) ? renderSvg(rep) : renderHtml(rep));
    } catch (e) {
      throw new UsageError(`--chart ${chart}: cannot be written (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  process.stdout.write(flags.json === true ? renderJson(rep) : renderMarkdown(rep));
  return 0;
}
