import { INSPECT_FLAGS, inspectionFromFlags } from './inspectFlags';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type DemoDispatch, type DemoTurnResult, type LiveTurn, runDemoTurn } from '../demo/run';
import { fmtS, legend, LiveView, PlainLog, renderChart, style } from '../demo/render';
import { demoScript } from '../demo/script';
import { DEMO_LATENCY_MS, demoRegistry } from '../demo/tools';
import { copyWorkspace, findSampleWorkspace, removeWorkspace } from '../demo/workspace';
import { scriptFromTrace, startScriptedUpstream } from '../gateway/scripted';
import { checkTurn } from '../trace/invariants';
import { synthesizeTrace } from '../trace/synth';
import { numberFlag, parseArgs, UsageError } from './args';

export const DEMO_HELP = `sluice demo [options]

The main job, on your machine, with no network and no keys: an embedded scripted model on
127.0.0.1 streams a realistic coding turn (it reads three files, greps, then edits one) in the
OpenAI chat wire format over real HTTP. sluice decodes the stream, and each call moves through its
states as it completes; real tools run on a temporary copy of a sample workspace. The same turn
then runs again under classic post-stream dispatch, and the time saved is printed.

Options:
  --time-scale F       scale every script time and tool latency (default 1; 0.5 = twice as fast)
  --plain              print one line per change instead of redrawing (default when not a TTY)
  --no-color           no ANSI colours (also NO_COLOR=1)
  --timeline FILE      also write both runs as a timeline chart (.svg or .html)
  --json               print the timings of both runs as JSON (no argument or result contents)
  --keep               keep the temporary workspace copies (their paths are printed)
  --inspect            serve the actors to the Stately inspector (local websocket server)
  --inspect-log FILE   record inspection events as JSONL for offline viewing (contents redacted)
  --inspect-contents   keep argument and result contents in inspection events
  -h, --help           this help

Exit codes: 0 ok, 1 the demo could not run (no sample workspace, tool or model failure), 2 usage error.
`;

const SPEC = {
  'time-scale': { type: 'string' },
  plain: { type: 'boolean' },
  'no-color': { type: 'boolean' },
  timeline: { type: 'string' },
  json: { type: 'boolean' },
  keep: { type: 'boolean' },
  ...INSPECT_FLAGS,
  help: { type: 'boolean' },
} as const;

export interface DemoRun {
  dispatch: DemoDispatch;
  result: DemoTurnResult;
  workspace: string;
  edited: boolean;
}

/** JSON-safe timings of one run (ids, names, kinds, sizes and times only). */
export function runTimings(run: DemoRun) {
  const { live, summary } = run.result;
  return {
    dispatch: run.dispatch,
    outcome: summary.outcome,
    streamEndMs: live.streamEndMs,
    turnDoneMs: summary.turnDoneMs,
    calls: live.calls.map((c) => ({
      index: c.index,
      name: c.name,
      kind: c.kind,
      state: c.phase,
      phases: c.phases,
      argsBytes: c.argsBytes,
      openMs: c.openMs,
      completeMs: c.completeMs,
      releasedMs: c.releasedMs,
      startedMs: c.startedMs,
      resultMs: c.resultMs,
      ok: c.ok,
      resultChars: c.resultChars,
    })),
    invariants: checkTurn(summary.history, summary.trace),
    workspaceEdited: run.edited,
  };
}

export async function run(argv: string[]): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(DEMO_HELP);
    return 0;
  }
  const { positionals, flags } = parseArgs(argv, SPEC);
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const scale = numberFlag(flags['time-scale'], 'time-scale', 1)!;
  if (scale <= 0 || scale > 20) throw new UsageError('--time-scale must be > 0 and ≤ 20');
  const timelineFile = typeof flags.timeline === 'string' ? flags.timeline : undefined;
  if (timelineFile && !/\.(svg|html?)$/i.test(timelineFile))
    throw new UsageError('--timeline must end in .svg or .html');
  const out = process.stdout;
  const json = flags.json === true;
  const tty = out.isTTY === true && !json;
  const live = tty && flags.plain !== true;
  const color = tty && flags['no-color'] !== true && !process.env.NO_COLOR;
  const write = (s: string): void => {
    if (!json) out.write(s);
  };

  const sample = findSampleWorkspace();
  if (!sample) {
    process.stderr.write(
      'sluice demo: the sample workspace (examples/workspace) was not found next to this installation\n',
    );
    return 1;
  }

  const script = demoScript(scale);
  const trace = synthesizeTrace('openai-chat', script);
  const upstream = await startScriptedUpstream({ script: scriptFromTrace(trace)[0]! });

  const inspection = await inspectionFromFlags(flags, (s) => process.stderr.write(s));

  const latency = {
    read_file: Math.round(DEMO_LATENCY_MS.read_file * scale),
    grep: Math.round(DEMO_LATENCY_MS.grep * scale),
    edit_file: Math.round(DEMO_LATENCY_MS.edit_file * scale),
  };
  // Both runs share one time axis so the bars compare: the post-stream turn's length, plus room.
  const expectedPost = script.endMs + Math.max(latency.read_file, latency.grep) + latency.edit_file;
  const scaleMs = Math.ceil((expectedPost * 1.15) / (500 * scale)) * 500 * scale;
  const width = Math.max(24, Math.min(64, (out.columns ?? 100) - 2 - 16 - 2 - 34));

  write(
    `\n${style.bold(color, 'sluice demo')} — a coding turn from a scripted model on ${upstream.url} (no network, no keys)\n` +
      `  the model reads 3 files, greps, then edits one; tools run for real on a temporary copy of examples/workspace\n` +
      `  each tool also waits a sandbox round trip: read_file ${latency.read_file} ms, grep ${latency.grep} ms, edit_file ${latency.edit_file} ms\n`,
  );

  const runs: DemoRun[] = [];
  try {
    for (const dispatch of ['streaming', 'post-stream'] as const) {
      const title =
        dispatch === 'streaming'
          ? `▶ streaming dispatch — read-only calls start the moment they are complete`
          : `▶ post-stream dispatch — the same turn, tools wait for the end of the stream`;
      write('\n');
      const ws = copyWorkspace(sample);
      let current: LiveTurn | undefined;
      const view = live
        ? new LiveView(out, () => current, [style.bold(color, title)], { scaleMs, width, color })
        : undefined;
      const log = live ? undefined : new PlainLog(write, dispatch);
      if (!live) write(`${title}\n`);
      view?.start();
      let result: DemoTurnResult;
      try {
        result = await runDemoTurn({
          url: upstream.url,
          dispatch,
          registry: demoRegistry({ root: ws, latencyMs: latency }),
          onChange: (turn, change) => {
            current = turn;
            log?.onChange(turn, change);
          },
          inspect: inspection?.observer,
        });
      } finally {
        view?.stop();
      }
      log?.end();
      if (!live) {
        write('\n');
        for (const l of renderChart(result.live, { scaleMs, width, color })) write(l + '\n');
      }
      const app = fs.readFileSync(path.join(ws, 'src', 'app.ts'), 'utf8');
      const edited = app.includes('parseConfig(raw, { strict: true })');
      runs.push({ dispatch, result, workspace: ws, edited });
      write(
        `  turn done in ${style.bold(color, fmtS(result.summary.turnDoneMs))}` +
          `  ·  stream ended at ${fmtS(result.live.streamEndMs)}` +
          `  ·  src/app.ts ${edited ? 'edited' : style.red(color, 'NOT edited')}\n`,
      );
    }
    write('\n' + legend(color) + '\n');
  } catch (err) {
    await inspection?.close();
    throw err;
  } finally {
    await upstream.close();
    if (flags.keep !== true) for (const r of runs) removeWorkspace(r.workspace);
  }

  const [streaming, post] = runs as [DemoRun, DemoRun];
  const s = streaming.result.summary.turnDoneMs;
  const p = post.result.summary.turnDoneMs;
  const saved = p - s;
  const violations = [
    ...checkTurn(streaming.result.summary.history, streaming.result.summary.trace),
    ...checkTurn(post.result.summary.history, post.result.summary.trace),
  ];
  const ok =
    runs.every(
      (r) =>
        r.result.summary.outcome === 'done' && r.edited && r.result.live.calls.every((c) => c.ok === true),
    ) && violations.length === 0;

  if (timelineFile) {
    const { writeChart, timelineFromDemo } = await import('./timeline');
    writeChart(timelineFile, timelineFromDemo(runs.map((r) => r.result.live)));
  }

  if (json) {
    out.write(
      JSON.stringify(
        { savedMs: saved, streaming: runTimings(streaming), postStream: runTimings(post), ok },
        null,
        2,
      ) + '\n',
    );
  } else {
    const early = streaming.result.live.calls.filter(
      (c) =>
        c.startedMs !== undefined &&
        streaming.result.live.streamEndMs !== undefined &&
        c.startedMs < streaming.result.live.streamEndMs,
    ).length;
    const calls = streaming.result.live.calls.length;
    write(
      `\n${style.bold(color, 'result')}\n` +
        `  streaming dispatch     ${fmtS(s).padStart(8)}\n` +
        `  post-stream dispatch   ${fmtS(p).padStart(8)}\n` +
        `  ${style.bold(color, 'saved')}                  ${style.green(color, style.bold(color, fmtS(saved).padStart(8)))}  (${((100 * saved) / p).toFixed(0)}% of the turn) — ${early} of ${calls} calls ran while the model was still writing\n` +
        `  history: 1 assistant message with ${calls} calls + their ${calls} results in call order; invariants ${violations.length === 0 ? 'ok' : style.red(color, `${violations.length} violation(s)`)}\n` +
        (timelineFile ? `  timeline written to ${timelineFile}\n` : '') +
        (flags.keep === true ? `  workspaces kept: ${runs.map((r) => r.workspace).join(', ')}\n` : '') +
        `\n  next: ${demoHint(sample)}\n\n`,
    );
  }
  if (!ok) process.stderr.write('sluice demo: the turn did not complete as expected (see above)\n');
  await inspection?.close();
  return ok ? 0 : 1;
}

/**
 * A recorded trace shipped beside the sample workspace (examples/ in the repository and in the
 * package), for the closing hint: it must exist wherever sluice is installed.
 */
export function sampleTrace(workspace: string): string {
  return path.join(path.dirname(workspace), 'coding-turn.anthropic.trace.jsonl');
}

/** The closing hint: what to try next, spelled as a command that works from here. */
export function demoHint(workspace: string, env: NodeJS.ProcessEnv = process.env): string {
  const cli = cliCommand(path.dirname(path.dirname(workspace)), env);
  return `${cli} replay ${shownPath(sampleTrace(workspace))} --timeline turn.svg · ${cli} analyze <trace> · ${cli} serve --upstream URL`;
}

/**
 * How to run this CLI from the current folder, given the package root it runs from:
 * - a checkout (the sources are there): `node <root>/dist/src/cli/main.js`, as the README does
 *   (`sluice` is not on PATH, and `npx sluice` would first rebuild the checkout: npm runs its
 *   prepare script when it links a local project);
 * - `sluice` when that name on PATH is this very CLI (a global install);
 * - else `npx sluice` (installed in a project: node_modules/.bin/sluice). PATH entries ending in
 *   node_modules/.bin are skipped, since npm puts them there only while `npx` / `npm run` runs.
 */
export function cliCommand(root: string, env: NodeJS.ProcessEnv = process.env): string {
  const main = path.join(root, 'dist', 'src', 'cli', 'main.js');
  if (fs.existsSync(path.join(root, 'src', 'index.ts'))) return `node ${shownPath(main)}`;
  const real = (p: string): string | undefined => {
    try {
      return fs.realpathSync(p);
    } catch {
      return undefined;
    }
  };
  const self = real(main);
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir === '' || /node_modules[\\/]\.bin[\\/]?$/.test(dir)) continue;
    const found = real(path.join(dir, 'sluice'));
    if (self !== undefined && found === self) return 'sluice';
  }
  return 'npx sluice';
}

/** A path as the user can type it from here: relative inside the current folder, else absolute. */
function shownPath(p: string): string {
  const rel = path.relative(process.cwd(), p);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : p;
}
