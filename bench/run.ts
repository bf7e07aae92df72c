/**
 * `npm run bench`: every benchmark side by side in one run, printed as tables, then every
 * SPEC §9 target marked met or not met.
 *
 *   npm run bench                        full run (19 minutes at load 13–17 on 2 vCPU); updates docs/benchmarks.md
 *   npm run bench -- --quick             10 KB and 100 KB only, shorter budgets (about two minutes);
 *                                        writes no page unless --markdown is given
 *   npm run bench -- --json              machine-readable results
 *   npm run bench -- --markdown FILE     write the results page to FILE instead of docs/benchmarks.md
 *   npm run bench -- --no-markdown       write no page
 *   npm run bench -- --only headline,throughput,lifecycle,scheduling,gateway,gateway-inbound,args,parsers,journal,soak,telemetry,gateway-telemetry,package
 *
 * The page (bench/page.ts) has one section per benchmark between `<!-- bench:NAME -->` markers,
 * each with the command, the machine and the date of the run that made it; a run replaces the
 * sections it measured and keeps the others. The headline table is also written into README.md
 * (between the same markers) by a run that measured it (not by `--quick`).
 *   npm run bench -- --baseline <git-ref>  also measure that commit's build beside this one, in the
 *                                        same run (bench/baseline.ts; built once per commit in a temp folder)
 *
 * Times are CPU time of this process where the bench says so (the machine may be shared; see
 * bench/throughput.ts `timeAsync`), wall time otherwise. Exit code 0 whether or not targets are
 * met (the table says which); 1 when a benchmark itself failed (a consumer gave a wrong result).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { type Baseline, resolveBaseline } from './baseline';
import { benchArgs, formatRows as formatArgs, type Row as ArgsRow } from './args';
import { benchGateway, type Row as GatewayRow } from './gateway';
import { benchHeadline, formatHeadline, formatHeadlineNotes, formatHeadlineTurns, type HeadlineResult } from './headline';
import { type Target, updatePage, updateReadme } from './page';
import { benchGatewayInbound, formatGatewayInbound, inboundRatios, type InboundRow } from './gatewayInbound';
import { benchJournal, formatJournal, type JournalRow } from './journal';
import { benchLifecycle, formatLifecycle, type LifecycleRow } from './lifecycle';
import { benchScheduling, formatScheduling, type SchedulingResult } from './scheduling';
import { benchSoak, formatSoak, type SoakResult } from './soak';
import { benchPackage, formatPackage, packageTargets, type PackageResult } from './package';
import { benchTelemetry, formatTelemetry, type TelemetryRow } from './telemetry';
import { benchGatewayTelemetry, formatGatewayTelemetry, type GatewayTelemetryRow } from './gatewayTelemetry';
import { benchThroughput, formatThroughput, type ThroughputRow } from './throughput';

export type Section = 'headline' | 'throughput' | 'lifecycle' | 'scheduling' | 'gateway' | 'gateway-inbound' | 'args' | 'parsers' | 'journal' | 'soak' | 'telemetry' | 'gateway-telemetry' | 'package';
export const SECTIONS: readonly Section[] = ['headline', 'scheduling', 'lifecycle', 'throughput', 'gateway', 'gateway-inbound', 'args', 'parsers', 'journal', 'soak', 'telemetry', 'gateway-telemetry', 'package'];

export type { Target } from './page';

export interface BenchResults {
  machine: { cpu: string; cpus: number; memGiB: number; node: string; platform: string; load1Start: number; load1End?: number };
  command: string;
  startedAt: string;
  /** `--baseline <ref>`: the build measured beside this one (rows carry its numbers). */
  baseline?: Baseline;
  durationS?: number;
  headline?: HeadlineResult;
  throughput?: ThroughputRow[];
  lifecycle?: LifecycleRow[];
  journal?: JournalRow[];
  soak?: SoakResult;
  package?: PackageResult;
  telemetry?: TelemetryRow[];
  gatewayTelemetry?: GatewayTelemetryRow[];
  scheduling?: SchedulingResult;
  gateway?: GatewayRow[];
  gatewayInbound?: InboundRow[];
  args?: ArgsRow[];
  parsers?: { rows: unknown[]; text: string };
  targets: Target[];
  errors: string[];
}

const f = (x: number | undefined, d = 2): string => (x === undefined || !Number.isFinite(x) ? '—' : x.toFixed(d));

/** SPEC §9, each target with what this run measured. `undefined` = not measured in this run. */
export function evaluateTargets(r: BenchResults): Target[] {
  const t: Target[] = [];
  const sch = r.scheduling;
  if (sch) {
    const virt = sch.rows.filter((x) => x.clock === 'virtual');
    const wall = sch.rows.filter((x) => x.clock === 'wall');
    const vmax = Math.max(...virt.map((x) => x.ratio));
    t.push({ area: 'scheduling', target: 'turn ≤ 1.02 × idealMs on the corpus (virtual clock)', measured: `max ${f(vmax, 4)} over ${virt.length} turns`, met: vmax <= 1.02 });
    if (wall.length) {
      const wmax = Math.max(...wall.map((x) => x.ratio));
      const wmed = [...wall.map((x) => x.ratio)].sort((a, b) => a - b)[wall.length >> 1]!;
      t.push({ area: 'scheduling', target: 'turn ≤ 1.02 × idealMs on the corpus (real clock, real timers)', measured: `median ${f(wmed, 4)}, max ${f(wmax, 4)} over ${wall.length} turns`, met: wmax <= 1.02 });
    }
    for (const l of sch.latency) {
      if (l.source.endsWith('(CPU time)')) continue;
      const cpu = sch.latency.find((x) => x.source === `${l.source} (CPU time)`);
      const what = l.source === 'burst' ? '2,000 calls back to back' : l.source === 'wall-corpus' ? 'real-clock corpus, every round' : 'real-clock corpus, first round only';
      t.push({
        area: 'scheduling',
        target: `completion → tool invoked ≤ 1 ms at p99 (${what})`,
        measured: `p50 ${f(l.p50Ms, 3)} ms, p99 ${f(l.p99Ms, 3)} ms (${l.calls} calls)${cpu ? `; CPU time p99 ${f(cpu.p99Ms, 3)} ms` : ''}${l.baseline ? `; baseline p99 ${f(l.baseline.p99Ms, 3)} ms` : ''}`,
        met: l.p99Ms <= 1,
      });
    }
  }
  const tp = r.throughput;
  if (tp) {
    const at = (c: string, shape: string, big: boolean) =>
      tp.filter((x) => x.consumer === c && x.shape === shape).sort((a, b) => (big ? b.bytes - a.bytes : a.bytes - b.bytes))[0];
    for (const shape of ['string', 'nested'] as const) {
      const s = at('sluice', shape, true);
      if (!s) continue;
      const mb = s.bytes >= 900_000;
      const floor = at('min-sse', shape, true);
      t.push({
        area: 'throughput',
        target: `one ${mb ? '1 MB' : `${Math.round(s.bytes / 1000)} KB (1 MB not run)`} call (${shape}) ≤ 1.25 × minimal SSE consumer`,
        measured: `× ${f(s.vsMinSse)} (median ${f(s.msPerCall)} vs ${f(floor?.msPerCall)} CPU ms; fastest samples × ${f(floor ? s.msMin / floor.msMin : undefined)})`,
        met: mb ? (s.vsMinSse ?? Infinity) <= 1.25 : undefined,
      });
      const growth = tp.filter((x) => x.consumer === 'sluice' && x.shape === shape && x.growthPerDecade !== undefined).map((x) => x.growthPerDecade!);
      if (growth.length) {
        const g = Math.max(...growth);
        t.push({ area: 'throughput', target: `linear: ≤ 1.1 per decade, 10 KB → ${mb ? '1 MB' : '100 KB'} (${shape})`, measured: `max ${f(g)} (cost per delta, fastest samples, per decade)`, met: g <= 1.1 });
      }
    }
    for (const [rival, label] of [
      ['anthropic-sdk', '@anthropic-ai/sdk MessageStream'],
      ['ai-sdk', 'AI SDK streamText'],
    ] as const) {
      const pairs = tp
        .filter((x) => x.consumer === 'sluice')
        .map((s) => ({ s, o: tp.find((x) => x.consumer === rival && x.shape === s.shape && x.bytes === s.bytes) }))
        .filter((p) => p.o !== undefined);
      if (!pairs.length) continue;
      const worst = Math.max(...pairs.map((p) => p.s.msPerCall / p.o!.msPerCall));
      t.push({
        area: 'throughput',
        target: `beats ${label} on the same bytes (every size and shape)`,
        measured: `sluice takes at most ${f(worst * 100, 0)}% of its time (${pairs.length} cells)`,
        met: worst < 1,
      });
    }
  }
  const lc = r.lifecycle;
  if (lc) {
    const ex20 = lc.find((x) => x.mode === 'execute' && x.calls === 20);
    if (ex20) t.push({ area: 'lifecycle', target: 'a 20-call turn ≤ 5 ms of controller time (execute mode)', measured: `${f(ex20.msPerTurn)} CPU ms (gateway mode ${f(lc.find((x) => x.mode === 'gateway' && x.calls === 20)?.msPerTurn)} ms)`, met: ex20.msPerTurn <= 5 });
    for (const mode of ['execute', 'gateway'] as const) {
      const big = lc.find((x) => x.mode === mode && x.calls === 1000);
      // `linear`: equal blocks of 1,000 calls, no forced GC (bench/lifecycle.ts header); `vs20`: the per-size rows.
      const lin = big?.linear ?? big?.vs20;
      const how = big?.linear !== undefined ? ` in blocks of 1,000 calls (per-size rows: × ${f(big.vs20)})` : '';
      if (big) t.push({ area: 'lifecycle', target: `1,000 calls in one turn stay linear (${mode}; µs/call ≤ 1.5 × the 20-call turn's)`, measured: `× ${f(lin)}${how} (${f(big.usPerCall, 0)} µs/call, ${f(big.msPerTurn, 0)} ms/turn)`, met: (lin ?? Infinity) <= 1.5 });
      // Issue #20 goal 1: tighter linearity, and the cost against the baseline build.
      if (big) t.push({ area: 'lifecycle', target: `#20: µs/call at 1,000 calls ≤ 1.2 × at 20 (${mode})`, measured: `× ${f(lin)}${how}${big.baseline ? ` (baseline per-size rows × ${f(big.baseline.vs20)})` : ''}`, met: (lin ?? Infinity) <= 1.2 });
      if (big?.baseline && r.baseline) {
        t.push({
          area: 'lifecycle',
          target: `#20: 1,000-call turn ≤ 0.4 × the baseline's CPU per call (${mode}, baseline ${r.baseline.ref})`,
          measured: `× ${f(big.vsBaseline)} (${f(big.usPerCall, 0)} vs ${f(big.baseline.usPerCall, 0)} µs/call, alternating samples)`,
          met: (big.vsBaseline ?? Infinity) <= 0.4,
        });
      }
    }
  }
  const gw = r.gateway;
  if (gw) {
    for (const sc of ['sequential', 'load'] as const) {
      const g = gw.find((x) => x.bench === 'gateway' && x.scenario === sc);
      const d = gw.find((x) => x.bench === 'direct' && x.scenario === sc);
      if (g && d) {
        t.push({
          area: 'gateway',
          target: `added latency per event, ${sc === 'load' ? `${g.concurrency} concurrent streams` : 'one stream at a time'} (no SPEC target; reported)`,
          measured: `p50 +${f(g.p50Ms - d.p50Ms)} ms, p99 +${f(g.p99Ms - d.p99Ms)} ms; ${g.correct}/${g.requests} responses correct`,
          met: undefined,
        });
      }
    }
  }
  if (r.package) t.push(...packageTargets(r.package));
  const gtel = r.gatewayTelemetry;
  const gOff = gtel?.find((x) => x.side === 'off');
  const gOn = gtel?.find((x) => x.side === 'on');
  if (gOff && gOn)
    t.push({ area: 'gateway telemetry', target: 'telemetry off ≤ 3% CPU per chunk vs no observer (on: reported)', measured: `off × ${f(gOff.ratio, 3)}, on × ${f(gOn.ratio, 3)}`, met: gOff.ratio <= 1.03 });
  for (const x of r.gatewayInbound ? inboundRatios(r.gatewayInbound) : []) {
    const row = (path: string) => r.gatewayInbound!.find((y) => y.path === path && y.api === x.api);
    t.push({
      area: 'gateway',
      target: `${x.api} inbound: first call before the stream ends; CPU and chunks/s vs direct and a buffering translator (no SPEC target; reported)`,
      measured: `call 0 ${f(row('sluice')?.firstCallAfterCompletionMs)} ms after its completion (buffering ${f(row('buffering')?.firstCallAfterCompletionMs)} ms); chunks/s × ${f(x.vsDirectChunksPerSec)} direct, × ${f(x.vsBufferingChunksPerSec)} buffering; CPU/chunk × ${f(x.vsBufferingCpu)} buffering`,
      met: undefined,
    });
  }
  return t;
}

function formatGateway(rows: GatewayRow[]): string {
  const lines = ['| path | scenario | requests | concurrency | events | p50 ms | p99 ms | max ms | tool p50 | tool p99 | correct |', '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|'];
  for (const r of rows) lines.push(`| ${r.bench} | ${r.scenario} | ${r.requests} | ${r.concurrency} | ${r.events} | ${f(r.p50Ms)} | ${f(r.p99Ms)} | ${f(r.maxMs)} | ${f(r.toolP50Ms)} | ${f(r.toolP99Ms)} | ${r.correct}/${r.requests} |`);
  return lines.join('\n') + '\n';
}

export function formatTargets(targets: Target[]): string {
  const lines = ['| area | SPEC §9 target | measured | |', '|---|---|---|---|'];
  for (const x of targets) lines.push(`| ${x.area} | ${x.target} | ${x.measured} | ${x.met === undefined ? '—' : x.met ? '**met**' : '**not met**'} |`);
  return lines.join('\n') + '\n';
}

/** One benchmark's part of the results: its page section key, title and body (Markdown). */
export interface ResultSection {
  key: string;
  title: string;
  body: string;
}

/** The sections this run measured, in page order. */
export function resultSections(r: BenchResults): ResultSection[] {
  const out: ResultSection[] = [];
  const add = (key: string, title: string, body: string | undefined) => {
    if (body !== undefined) out.push({ key, title, body });
  };
  if (r.headline) add('headline', 'Headline: early dispatch on coding-agent turns (bench/headline.ts)', `${formatHeadline(r.headline)}\n${formatHeadlineNotes(r.headline)}\n<details><summary>Every turn</summary>\n\n${formatHeadlineTurns(r.headline)}\n</details>\n`);
  if (r.scheduling) add('scheduling', 'Scheduling (bench/scheduling.ts)', formatScheduling(r.scheduling));
  if (r.lifecycle) add('lifecycle', 'Lifecycle (bench/lifecycle.ts)', formatLifecycle(r.lifecycle));
  if (r.journal) add('journal', 'Journal: durable turns (bench/journal.ts)', formatJournal(r.journal));
  if (r.throughput) add('throughput', 'Throughput (bench/throughput.ts)', formatThroughput(r.throughput));
  if (r.gateway) add('gateway', 'Gateway (bench/gateway.ts)', formatGateway(r.gateway));
  if (r.gatewayInbound) add('gateway-inbound', 'Gateway per inbound API: CPU in its own process, chunks/s, first call (bench/gatewayInbound.ts)', formatGatewayInbound(r.gatewayInbound));
  if (r.args) add('args', 'Argument path: ArgBuffer (bench/args.ts)', ['```', formatArgs(r.args).trimEnd(), '```', ''].join('\n'));
  if (r.parsers) add('parsers', 'Open-model text parsers (bench/parsers.ts)', ['```', r.parsers.text.trimEnd(), '```', ''].join('\n'));
  if (r.telemetry) add('telemetry', 'Library telemetry: runTurn CPU with OpenTelemetry off and on (bench/telemetry.ts)', formatTelemetry(r.telemetry));
  if (r.gatewayTelemetry) add('gateway-telemetry', 'Gateway telemetry: CPU per chunk with no observer, telemetry off and on (bench/gatewayTelemetry.ts)', formatGatewayTelemetry(r.gatewayTelemetry));
  if (r.soak) add('soak', 'Gateway soak: streams, slow bodies and idle sockets together (bench/soak.ts)', formatSoak(r.soak));
  if (r.package) add('package', 'Package: bundle size and cold start (bench/package.ts)', formatPackage(r.package));
  return out;
}

/** The run's machine, command and date in one line (each page section carries it). */
export function runLine(r: BenchResults): string {
  const m = r.machine;
  return (
    `Command: \`${r.command}\`${r.durationS !== undefined ? ` (${f(r.durationS, 0)} s)` : ''}. ` +
    `Machine: ${m.cpu}, ${m.cpus} vCPU, ${m.memGiB} GiB, Node ${m.node} (${m.platform}); load average ${f(m.load1Start)} at start${m.load1End !== undefined ? `, ${f(m.load1End)} at end` : ''}. ` +
    `Date: ${r.startedAt.slice(0, 10)}.` +
    (r.baseline ? ` Baseline: \`${r.baseline.ref}\` = ${r.baseline.commit.slice(0, 12)} (bench/baseline.ts), measured in the same run.` : '')
  );
}

export function formatResults(r: BenchResults): string {
  const out: string[] = [runLine(r), ''];
  if (r.targets.length) out.push('## SPEC §9 targets', '', formatTargets(r.targets));
  for (const x of resultSections(r)) out.push(`## ${x.title}`, '', x.body);
  if (r.errors.length) out.push('## Errors', '', ...r.errors.map((e) => `- ${e}`), '');
  return out.join('\n');
}

interface ParsersModule {
  benchParsers(opts?: Record<string, unknown>): Promise<unknown[]>;
  formatRows?(rows: unknown[]): string;
}

export async function runAll(opts: { quick?: boolean; only?: Section[]; baseline?: string; log?: (s: string) => void } = {}): Promise<BenchResults> {
  const log = opts.log ?? (() => undefined);
  const only = new Set(opts.only ?? SECTIONS);
  const quick = opts.quick === true;
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const r: BenchResults = {
    machine: { cpu, cpus: os.cpus().length, memGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, platform: `${os.platform()} ${os.arch()}`, load1Start: os.loadavg()[0]! },
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    startedAt: new Date().toISOString(),
    targets: [],
    errors: [],
  };
  const t0 = performance.now();
  if (opts.baseline) r.baseline = await resolveBaseline(opts.baseline, log);
  const baselineDist = r.baseline?.dist;
  const step = async <T>(name: Section, fn: () => Promise<T>): Promise<T | undefined> => {
    if (!only.has(name)) return undefined;
    log(`bench: ${name}…\n`);
    const s = performance.now();
    try {
      const v = await fn();
      log(`bench: ${name} done in ${((performance.now() - s) / 1000).toFixed(1)} s\n`);
      return v;
    } catch (err) {
      r.errors.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
      log(`bench: ${name} FAILED: ${err instanceof Error ? err.message : String(err)}\n`);
      return undefined;
    }
  };
  r.headline = await step('headline', () => benchHeadline({ quick, log }));
  r.scheduling = await step('scheduling', () => benchScheduling({ wall: true, baselineDist }));
  r.lifecycle = await step('lifecycle', () => benchLifecycle({ ...(quick ? { sizes: [20, 100, 1000], budgetMs: 500 } : {}), baselineDist }));
  r.throughput = await step('throughput', () => benchThroughput(quick ? { sizes: [10_000, 100_000], budgetMs: 500 } : {}));
  r.gateway = await step('gateway', () => benchGateway(quick ? { sequential: 20, concurrency: 100 } : {}));
  r.gatewayInbound = await step('gateway-inbound', () => benchGatewayInbound({ ...(quick ? { requests: 60, rounds: 1, timed: 4 } : {}), ...(baselineDist ? { baselineDist } : {}) }));
  r.args = await step('args', () => benchArgs(quick ? { budgetMs: 150 } : {}));
  r.parsers = await step('parsers', async () => {
    let mod: ParsersModule;
    try {
      // Optional: bench/parsers.ts may not exist in this checkout.
      const spec = './parsers';
      mod = (await import(spec)) as ParsersModule;
    } catch {
      throw new Error('bench/parsers is not available (skipped)');
    }
    const rows = await mod.benchParsers(quick ? { budgetMs: 150 } : {});
    return { rows, text: mod.formatRows ? mod.formatRows(rows) : JSON.stringify(rows, null, 2) };
  });
  r.journal = await step('journal', () => benchJournal({ budgetMs: quick ? 300 : 1500, pgUrl: process.env.SLUICE_PG_URL }));
  r.soak = await step('soak', () => benchSoak(quick ? { durationMs: 10_000 } : {}));
  r.package = await step('package', () => benchPackage({ quick }));
  r.telemetry = await step('telemetry', () => benchTelemetry({ budgetMs: quick ? 500 : 2000, baselineDist }));
  r.gatewayTelemetry = await step('gateway-telemetry', () => benchGatewayTelemetry({ budgetMs: quick ? 2000 : 8000 }));
  r.durationS = (performance.now() - t0) / 1000;
  r.machine.load1End = os.loadavg()[0]!;
  r.targets = evaluateTargets(r);
  return r;
}

if (require.main === module) {
  const argv = process.argv.slice(2);
  const json = argv.includes('--json');
  const quick = argv.includes('--quick');
  const mdIdx = argv.indexOf('--markdown');
  // The page is written by default, except for --quick (shorter budgets) and --no-markdown.
  const md = mdIdx >= 0 ? argv[mdIdx + 1] : quick || argv.includes('--no-markdown') ? undefined : 'docs/benchmarks.md';
  const onlyArg = argv.find((a) => a.startsWith('--only'));
  const onlyVal = onlyArg?.includes('=') ? onlyArg.split('=')[1] : onlyArg ? argv[argv.indexOf(onlyArg) + 1] : undefined;
  const only = onlyVal?.split(',').filter((s): s is Section => (SECTIONS as readonly string[]).includes(s));
  const bIdx = argv.indexOf('--baseline');
  const baseline = bIdx >= 0 ? argv[bIdx + 1] : undefined;
  if (bIdx >= 0 && (!baseline || baseline.startsWith('--'))) {
    process.stderr.write('bench: --baseline needs a git ref (a commit, branch or tag)\n');
    process.exit(2);
  }
  runAll({ quick, only, baseline, log: (s) => process.stderr.write(s) }).then(
    (r) => {
      if (md) {
        const page = { line: runLine(r), sections: resultSections(r), targets: r.targets, formatTargets };
        fs.writeFileSync(md, updatePage(fs.existsSync(md) ? fs.readFileSync(md, 'utf8') : '', page));
        process.stderr.write(`bench: updated ${md}\n`);
        if (r.headline && !quick && fs.existsSync('README.md')) {
          const readme = fs.readFileSync('README.md', 'utf8');
          const next = updateReadme(readme, r);
          if (next !== readme) {
            fs.writeFileSync('README.md', next);
            process.stderr.write('bench: updated the headline table in README.md\n');
          }
        }
      }
      process.stdout.write(json ? JSON.stringify(r, null, 2) + '\n' : formatResults(r) + '\n');
      const broken = r.errors.filter((e) => !e.includes('(skipped)'));
      process.exitCode = broken.length ? 1 : 0;
    },
    (err: unknown) => {
      process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
