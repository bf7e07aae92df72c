#!/usr/bin/env node
import { failureLine, UsageError } from './args';
import { CliError } from './input';
import { registerTextParsers } from '../parsers';

/**
 * The `sluice` command. Each command lives in its own file and exports `run(argv) → exit code`;
 * commands are loaded lazily so `sluice --help` stays instant.
 */

interface Command {
  summary: string;
  load: () => Promise<{ run: (argv: string[]) => Promise<number> }>;
}

const COMMANDS: Record<string, Command> = {
  demo: {
    summary: 'play a realistic multi-tool turn on the embedded scripted model (no network)',
    load: () => import('./demo'),
  },
  replay: {
    summary: 'run a trace on a virtual clock with simulated tools; report timings',
    load: () => import('./replay'),
  },
  resume: {
    summary: 'finish a journaled turn after a crash (sluice replay --journal FILE --crash-at MS)',
    load: () => import('./resume'),
  },
  convert: {
    summary: 'write the Anthropic SSE the gateway would send for a trace',
    load: () => import('./convert'),
  },
  serve: {
    summary: 'gateway: Messages, Responses and Chat Completions in; OpenAI chat, Responses, Anthropic or Gemini upstream (or scripted:demo)',
    load: () => import('./serve'),
  },
  analyze: {
    summary: 'how early each call completed, and what early dispatch saves',
    load: () => import('./analyze'),
  },
  report: {
    summary: 'rollout report from OTLP JSON, gateway logs or journals: per provider and model, early calls, head start, time saved, violations',
    load: () => import('./report'),
  },
};

export const HELP = `sluice — stream-driven tool dispatch

Usage: sluice <command> [options]        (sluice <command> --help for details)

Commands:
${Object.entries(COMMANDS)
  .map(([n, c]) => `  ${n.padEnd(9)} ${c.summary}`)
  .join('\n')}

Exit codes: 0 ok, 1 the run failed (one line on stderr), 2 usage error (bad flag, unknown
format, missing or unreadable kind of input file). --debug (or SLUICE_DEBUG=1) adds stack traces.
`;

/** `--debug` anywhere (removed from argv) or SLUICE_DEBUG=1: failures print their stack trace. */
function takeDebugFlag(argv: string[]): { argv: string[]; debug: boolean } {
  const debug = argv.includes('--debug') || process.env.SLUICE_DEBUG === '1';
  return { argv: argv.filter((a) => a !== '--debug'), debug };
}



export async function main(rawArgv: string[]): Promise<number> {
  // `--format text:<family>` in every command reads raw open-model text through src/parsers.
  registerTextParsers();
  const { argv, debug } = takeDebugFlag(rawArgv);
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(HELP);
    return name ? 0 : 2;
  }
  if (name === '--version') {
    process.stdout.write('sluice 0.1.0\n');
    return 0;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    process.stderr.write(`sluice: unknown command "${name}"\n\n${HELP}`);
    return 2;
  }
  try {
    const mod = await cmd.load();
    return await mod.run(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`sluice ${name}: ${failureLine(err, false)} (see sluice ${name} --help)\n`);
      return 2;
    }
    // Every other failure (CliError, a limit, an I/O error, a bug) is one line and exit 1.
    const hint = err instanceof CliError || debug ? '' : ' (--debug for details)';
    process.stderr.write(`sluice ${name}: ${failureLine(err, debug)}${hint}\n`);
    return 1;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      const debug = process.argv.includes('--debug') || process.env.SLUICE_DEBUG === '1';
      process.stderr.write(`sluice: internal error: ${failureLine(err, debug)}\n`);
      process.exitCode = 1;
    },
  );
}
