import { numberFlag, parseArgs, UsageError } from './args';
import { readTraceFile } from './replay';
import { convertTrace } from '../trace/convert';

export const CONVERT_HELP = `sluice convert <trace> --to anthropic [options]

Writes to stdout the Anthropic Messages SSE that \`sluice serve\` would send for this stream:
each complete tool call released as its own tool_use block, in order, as soon as it is ready.

<trace> is a .trace.jsonl file, a raw provider .sse recording, or one JSON payload per line.

Options:
  --to anthropic         output form (only anthropic for now)
  --format FORMAT        input wire format (default: detected)
  --completion MODE      inferred (default) | evidence-only
  --single-tool          disable_parallel_tool_use: release at most one call
  --pace MS              spacing for raw recordings (no effect on the output)
  -h, --help             this help

Warnings (suppressed calls, repairs, bad lines) go to stderr; argument contents are never printed there.
`;

const SPEC = {
  to: { type: 'string', choices: ['anthropic'] },
  format: { type: 'string' },
  completion: { type: 'string', choices: ['inferred', 'evidence-only'] },
  'single-tool': { type: 'boolean' },
  pace: { type: 'string' },
  help: { type: 'boolean' },
} as const;

export async function run(argv: string[]): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(CONVERT_HELP);
    return 0;
  }
  const { positionals, flags } = parseArgs(argv, SPEC);
  if (positionals.length !== 1) throw new UsageError('expected exactly one trace file');
  if (flags.to === undefined) throw new UsageError('--to is required (anthropic)');
  const trace = readTraceFile(
    positionals[0]!,
    flags.format as string | undefined,
    numberFlag(flags.pace, 'pace'),
  );
  const r = convertTrace(trace, {
    completion: flags.completion as 'inferred' | 'evidence-only' | undefined,
    singleTool: flags['single-tool'] === true,
  });
  process.stdout.write(r.sse);
  const limit = r.warnings.find((w) => w.startsWith('limit_exceeded: '));
  if (limit) {
    // A resource limit ended the turn (docs/limits.md): the SSE ends with its error event; one line, exit 1.
    process.stderr.write(`sluice convert: ${limit.slice('limit_exceeded: '.length)}; the turn was ended\n`);
    return 1;
  }
  for (const w of r.warnings) process.stderr.write(`warning: ${w}\n`);
  return 0;
}
