/**
 * docs/benchmarks.md from a bench run: one section per benchmark between `<!-- bench:KEY -->` and
 * `<!-- /bench:KEY -->`, each with the command, the machine and the date of the run that made it,
 * its table and the SPEC §9 targets it checks. A run replaces the sections it measured and keeps
 * the others, so `npm run bench -- --only package` refreshes the package table alone. The text
 * above the sections is written here (it is regenerated too); nothing between markers is edited by
 * hand.
 *
 * README.md carries the headline table between the same markers (`<!-- bench:headline -->`);
 * `updateReadme` replaces that block only.
 */
import { formatHeadline, type HeadlineResult, PROFILES } from './headline';

/** What a run hands the page: its line (command, machine, date), its sections and its targets. */
export interface PageInput {
  line: string;
  sections: Array<{ key: string; title: string; body: string }>;
  targets: Target[];
  formatTargets(targets: Target[]): string;
}

export interface Target {
  area: string;
  target: string;
  measured: string;
  met: boolean | undefined;
}

/** Page order of the sections. */
export const PAGE_SECTIONS = [
  'headline',
  'scheduling',
  'lifecycle',
  'journal',
  'throughput',
  'gateway',
  'gateway-inbound',
  'args',
  'parsers',
  'telemetry',
  'gateway-telemetry',
  'soak',
  'package',
] as const;

const MARK = /<!-- bench:([a-z-]+) -->\n([\s\S]*?)<!-- \/bench:\1 -->\n?/g;

export const PAGE_HEAD = `# Benchmarks

The current results of every benchmark, one section each. Each section names the command, the
machine and the date of the run that produced it. \`npm run bench\` (the full set: 19 minutes on
a busy 2-vCPU machine) rewrites this page; \`npm run bench -- --only NAME[,NAME]\` rewrites just those sections
(names as in the section markers, e.g. \`--only headline\` or \`--only package\`);
\`npm run bench -- --quick\` is a shorter smoke run that writes no page. Earlier results are in
git history (\`git log -p docs/benchmarks.md\`). Numbers from a shared machine carry its load: the
load average at the start and end of each run is in its line.

What each benchmark does (method in the header comment of its \`bench/*.ts\`):

- **Headline** (bench/headline.ts): how much turn time early dispatch saves on coding-agent
  turns. *Simulated:* the model — a corpus of agent steps streamed in each provider's own format at
  published output speeds (${PROFILES.map((p) => `${p.tokensPerSec.toLocaleString('en-US')} tok/s`).join(', ')}; sources
  below). *Measured:* everything else — the real \`runTurn\` on the real clock, and tools that
  really run on this repository (read a file, \`git grep\`, \`ls\`, \`git log\`, \`git diff\`,
  \`git status\`, a \`node --test\` run, an edit applied to a temporary copy). Each turn runs
  with early dispatch and post-stream (every call after the stream, read-only ones concurrently),
  twice each, alternating. The tail of a run is its last tool result − the end of the stream;
  saving = post-stream tail − early tail (the stream is simulated and the same in both runs, so
  timer lateness on a busy machine is kept out of the saving; whether early dispatch delays the
  reading of the stream is reported beside it); turn = time to first token + the stream + the
  tail; share = saving ÷ post-stream turn; ideal = every tool's time hidden behind the stream (a
  saving of the whole post-stream tail). Time to first token is added, not waited for.
- **Scheduling** (bench/scheduling.ts): a corpus of timed turns in four wire formats, replayed on
  the virtual clock and on the real clock with real timers; \`idealMs\` = every safe call starts at
  its completion (unlimited concurrency), unsafe calls after the stream and every earlier call.
  Dispatch latency = the completing event enters \`feed()\` → \`runTool\` is invoked.
- **Lifecycle** (bench/lifecycle.ts): controller CPU time for a whole turn of N calls fed as
  canonical events (no SSE), tools that resolve at once; linearity measured in equal blocks of
  1,000 calls (one 1,000-call turn against 50 turns of 20, alternating).
- **Journal** (bench/journal.ts): one record appended to the file store with and without
  fdatasync, and the 20-call lifecycle turn with a journal (file store, memory; PostgreSQL when
  \`SLUICE_PG_URL\` is set) next to the same turn without one.
- **Throughput** (bench/throughput.ts): one tool call of N bytes streamed as Anthropic SSE in
  ~10-byte \`input_json_delta\`s, the same bytes for every consumer; the minimal SSE consumer
  (eventsource-parser + \`JSON.parse\` per event + concat + one final parse) is the yardstick. CPU
  time of this process (median).
- **Gateway** (bench/gateway.ts): per-event latency client ← gateway ← scripted upstream on
  loopback, against the direct hop (client ← upstream).
- **Gateway per inbound API** (bench/gatewayInbound.ts): for /v1/messages, /v1/responses and
  /v1/chat/completions over one scripted OpenAI-chat turn, the middle process's CPU per upstream
  chunk (sluice, a byte pipe and a plain buffering translator, each in a child process), chunks/s,
  and when the first tool call reaches the client.
- **Argument path, parsers, telemetry, soak, package**: see bench/args.ts, bench/parsers.ts,
  bench/telemetry.ts, bench/gatewayTelemetry.ts, bench/soak.ts and bench/package.ts.
- **Baseline** (bench/baseline.ts): \`npm run bench -- --baseline <git-ref>\` builds that commit in
  a temporary folder and measures it beside this checkout in the same run (rows with a baseline
  column).

Provider profiles of the headline benchmark (published medians; the model is simulated at these
speeds):

${PROFILES.map((p) => `- ${p.label}: ${p.source}.`).join('\n')}

Shapes of the headline corpus: tool calls per step 1.2 on average, p50 1, p90 2, p99 4 over
357,161 public Claude Code and Codex steps (SyFI TraceLab,
tracelab.cs.washington.edu/exp/session/session_internal_counts); text before the calls, one
content block or tool-call delta per call and arguments in small fragments as in the recorded
Anthropic, OpenAI and Gemini streams (\`../shared/fixtures\`, SOURCES.md). The median output per
step across coding harnesses is ~213 tokens (SemiAnalysis, tokenomics.info/cerebras); the corpus's
steps are shorter (median ~50 tokens) because they leave out reasoning, which comes before any call:
it would lengthen every turn and lower the share, not change the saving.
`;

/** Which page section a SPEC §9 target belongs to. */
export function targetSection(t: Target): string {
  if (t.area === 'gateway') return t.target.includes('inbound') ? 'gateway-inbound' : 'gateway';
  if (t.area === 'gateway telemetry') return 'gateway-telemetry';
  return t.area;
}

function block(key: string, title: string, body: string): string {
  return `<!-- bench:${key} -->\n## ${title}\n\n${body.trimEnd()}\n<!-- /bench:${key} -->\n`;
}

/** The page with this run's sections replaced (or added) and every other section kept. */
export function updatePage(existing: string, r: PageInput): string {
  const kept = new Map<string, string>();
  for (const m of existing.matchAll(MARK)) kept.set(m[1]!, m[0].endsWith('\n') ? m[0] : m[0] + '\n');
  for (const s of r.sections) {
    if (s.key === 'targets') continue;
    const targets = r.targets.filter((t) => targetSection(t) === s.key);
    const body = `${r.line}\n\n${s.body.trimEnd()}\n${targets.length ? `\nSPEC §9 targets:\n\n${r.formatTargets(targets)}` : ''}`;
    kept.set(s.key, block(s.key, s.title, body));
  }
  const parts = [PAGE_HEAD];
  for (const key of PAGE_SECTIONS) {
    parts.push(kept.get(key) ?? block(key, key, `Not measured yet: \`npm run bench -- --only ${key}\`.\n`));
  }
  return parts.join('\n');
}

/** README.md with the headline block replaced by this run's table (unchanged when it has no block or the run has no headline). */
export function updateReadme(readme: string, r: { headline?: HeadlineResult; command: string; startedAt: string; machine: { cpus: number; cpu: string; node: string; load1Start: number } }): string {
  if (!r.headline) return readme;
  const start = '<!-- bench:headline -->\n';
  const end = '<!-- /bench:headline -->';
  const a = readme.indexOf(start);
  const b = readme.indexOf(end);
  if (a < 0 || b < a) return readme;
  const m = r.machine;
  const body =
    formatHeadline(r.headline) +
    `\n<sub>\`${r.command}\`, ${r.startedAt.slice(0, 10)}, ${m.cpus} vCPU ${m.cpu}, Node ${m.node}, load ${m.load1Start.toFixed(1)}; ` +
    `${r.headline.corpus.turns} agent steps per profile, each run twice per mode. Method, sources and every turn: docs/benchmarks.md.</sub>\n`;
  return readme.slice(0, a + start.length) + body + readme.slice(b);
}
