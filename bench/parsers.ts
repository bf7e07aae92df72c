/**
 * Open-model text parsers (issue 7): one call whose argument is N bytes, written in each family's
 * markup and fed to `createByteParser(family)` in seeded 1–16 byte chunks (the same chunks for
 * every run of a family and size). The big argument is a string with non-ASCII characters and
 * characters that need escaping (quotes, backslashes, newlines, tabs), so XML-ish families
 * escape it and JSON families pass it through.
 *
 * Reported per family: ms for 100 KB and 1 MB (the best CPU time of this process over the runs
 * that fit the budget, at least 5, after a check run and two warm-up runs: the best run is the
 * one least disturbed by other processes and by collector threads, whose time `process.cpuUsage`
 * also counts), ms per MB at 1 MB, and the growth
 * ratio: cost per byte at 1 MB ÷ cost per byte at 100 KB (1.0 = linear; a quadratic parser would
 * show ~10). The check run verifies that the call parses back to the argument (name, JSON equal,
 * one `call.complete`); timed runs handle events per push and keep none (see `parseStreaming`).
 *
 * Run alone: `npx ts-node bench/parsers.ts [--quick] [--json]`, or `node dist/bench/parsers.js`
 * after `npm run build`; also part of `npm run bench`.
 */
import { createByteParser, listFamilies } from '../src/parsers';
import type { StreamEvent } from '../src/wire/events';
import { prng } from './prng';

export interface Row {
  family: string;
  /** Bytes of the whole stream at the largest size. */
  bytes: number;
  /** 1–16 byte chunks at the largest size. */
  chunks: number;
  ms100k: number;
  ms1m: number;
  msPerMB: number;
  /** (ms per byte at the largest size) / (ms per byte at the smallest size). */
  growth: number;
  /**
   * At the largest size: time of the last tenth of the pushes / time of the first tenth (best of
   * the runs). Per-push cost that grew with the position in the stream would show here as > 1;
   * unlike `growth` it does not compare heaps of different sizes.
   */
  tailRatio: number;
  runs: number;
}

export interface ParsersBenchOptions {
  /** Argument sizes in bytes; the first and last give the growth ratio. Default [100_000, 1_000_000]. */
  sizes?: number[];
  /** Time budget per family and size (ms of wall time); at least 5 runs. Default 1500. */
  budgetMs?: number;
  families?: string[];
  seed?: number;
}

const UNIT = 'lorem ipsum 日本語 "quoted" back\\slash tab\there — ✅\nnext line; ';

/**
 * A string of about `bytes` UTF-8 bytes with no `<`, `[`, `{` (it never contains markup), ending
 * with a non-space (families that strip surrounding whitespace give it back unchanged).
 */
export function bigValue(bytes: number): string {
  const unitBytes = Buffer.byteLength(UNIT);
  return UNIT.repeat(Math.max(1, Math.round(bytes / unitBytes))) + 'END';
}

/** The family's markup for one call `write_file({path, content})`, with text and reasoning around it. */
export function callStream(family: string, content: string): string {
  const args = JSON.stringify({ path: 'out/big.txt', content });
  const think = '<think>Write the file.</think>';
  switch (family) {
    case 'hermes':
      return `${think}Writing.\n<tool_call>\n{"name": "write_file", "arguments": ${args}}\n</tool_call>`;
    case 'qwen3-coder':
      return `${think}<tool_call>\n<function=write_file>\n<parameter=path>\nout/big.txt\n</parameter>\n<parameter=content>\n${content}\n</parameter>\n</function>\n</tool_call>`;
    case 'deepseek-v3':
      return `${think}<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>write_file\n\`\`\`json\n${args}\n\`\`\`<｜tool▁call▁end｜><｜tool▁calls▁end｜>`;
    case 'deepseek-v3.1':
      return `${think}<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>write_file<｜tool▁sep｜>${args}<｜tool▁call▁end｜><｜tool▁calls▁end｜>`;
    case 'gigachat35':
      return `Writing it.<｜GCML｜tool_calls><｜GCML｜invoke name="write_file"><｜GCML｜parameter name="path" string="true">out/big.txt</｜GCML｜parameter><｜GCML｜parameter name="content" string="true">${content}</｜GCML｜parameter></｜GCML｜invoke></｜GCML｜tool_calls>`;
    case 'deepseek-v4':
      return (
        `${think}<｜DSML｜tool_calls>\n<｜DSML｜invoke name="write_file">\n` +
        `<｜DSML｜parameter name="path" string="true">out/big.txt</｜DSML｜parameter>\n` +
        `<｜DSML｜parameter name="content" string="true">${content}</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>`
      );
    case 'kimi-k2':
      return `${think}<|tool_calls_section_begin|><|tool_call_begin|>functions.write_file:0<|tool_call_argument_begin|>${args}<|tool_call_end|><|tool_calls_section_end|>`;
    case 'glm45':
      return `${think}<tool_call>write_file\n<arg_key>path</arg_key>\n<arg_value>out/big.txt</arg_value>\n<arg_key>content</arg_key>\n<arg_value>${content}</arg_value>\n</tool_call>`;
    case 'gpt-oss':
      return `<|channel|>analysis<|message|>Write the file.<|end|><|start|>assistant<|channel|>commentary to=functions.write_file <|constrain|>json<|message|>${args}<|call|>`;
    case 'nemotron':
      return `${think}<TOOLCALL>[{"name": "write_file", "arguments": ${args}}]</TOOLCALL>`;
    case 'mistral':
      return `[THINK]Write the file.[/THINK][TOOL_CALLS]write_file[ARGS]${args}`;
    case 'llama3':
      return `<|python_tag|>{"name": "write_file", "parameters": ${args}}<|eom_id|>`;
    case 'gemma4':
      return `<|channel>thought\nWrite the file.<channel|><|tool_call>call:write_file{path:<|"|>out/big.txt<|"|>,content:<|"|>${content}<|"|>}<tool_call|>`;
    case 'functiongemma':
      return `<start_function_call>call:write_file{path:<escape>out/big.txt<escape>,content:<escape>${content}<escape>}<end_function_call>`;
    // Issue 12, batch A.
    case 'pythonic':
      return `[write_file(path="out/big.txt", content=${JSON.stringify(content)})]<|eom|>`;
    case 'minimax-m2':
      return `${think}<minimax:tool_call>\n<invoke name="write_file">\n<parameter name="path">out/big.txt</parameter>\n<parameter name="content">${content}</parameter>\n</invoke>\n</minimax:tool_call>`;
    case 'step3':
      return `Writing it.<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>write_file\n<steptml:invoke name="write_file"><steptml:parameter name="path">out/big.txt</steptml:parameter><steptml:parameter name="content">${content}</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>`;
    case 'seed-oss':
      return `<seed:think>Write the file.</seed:think><seed:tool_call>\n<function=write_file>\n<parameter=path>out/big.txt</parameter>\n<parameter=content>${content}</parameter>\n</function>\n</seed:tool_call>`;
    case 'granite':
      return `${think}<|tool_call|>[{"name": "write_file", "arguments": ${args}}]<|end_of_text|>`;
    case 'xlam':
      return `[{"name": "write_file", "arguments": ${args}}]`;
    case 'hunyuan':
      return `${think}\n<answer>\n<tool_calls>[{"name": "write_file", "arguments": ${args}}]</tool_calls>\n</answer>`;
    case 'jamba':
      return `Writing it.<tool_calls>[\n    {"name": "write_file", "arguments": ${args}}\n]</tool_calls>`;
    case 'ernie45':
      return `${think}\n\n<tool_call>\n{"name": "write_file", "arguments": ${args}}\n</tool_call>\n`;
    case 'longcat':
      return `<longcat_think>Write the file.</longcat_think><longcat_tool_call>\n{"name": "write_file", "arguments": ${args}}\n</longcat_tool_call>`;
    case 'longcat-lite':
      return `Writing it.<longcat_tool_call>write_file\n<longcat_arg_key>path</longcat_arg_key>\n<longcat_arg_value>out/big.txt</longcat_arg_value>\n<longcat_arg_key>content</longcat_arg_key>\n<longcat_arg_value>${content}</longcat_arg_value>\n</longcat_tool_call>`;
    // issue 12, batch B
    case 'phi-4-mini':
    case 'firefunction-v2':
      return `Writing. functools[{"name": "write_file", "arguments": ${args}}]`;
    case 'internlm2':
      return `${think}<|action_start|><|plugin|>\n{"name": "write_file", "parameters": ${args}}<|action_end|>`;
    case 'command-r7b':
      return `<|START_THINKING|>Write the file.<|END_THINKING|><|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "write_file", "parameters": ${args}}\n]<|END_ACTION|>`;
    case 'apertus':
      return `<|inner_prefix|>Write the file.<|inner_suffix|><|tools_prefix|>[{"write_file": ${args}}]<|tools_suffix|>`;
    case 'gigachat3':
      return `Writing.<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "write_file", "arguments": ${args}}`;
    case 'functionary-v3.1':
      return `Writing.<function=write_file>${args}</function><|eom_id|>`;
    case 'functionary-v3.2':
      return `all\nWriting.>>>write_file\n${args}`;
    case 'kimi-k3':
      return (
        `<|open|>think<|sep|>Write the file.<|close|>think<|sep|><|open|>tools<|sep|><|open|>call tool="write_file" index="1"<|sep|>` +
        `<|open|>argument key="path" type="string"<|sep|>out/big.txt<|close|>argument<|sep|>` +
        `<|open|>argument key="content" type="string"<|sep|>${content}<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>`
      );
    case 'lfm2':
      return `${think}<|tool_call_start|>[write_file(path="out/big.txt", content=${JSON.stringify(content)})]<|tool_call_end|>`;
    case 'olmo3':
      return `${think}<function_calls>write_file(path="out/big.txt", content=${JSON.stringify(content)})</function_calls>`;
    default:
      throw new Error(`bench/parsers: no stream template for family ${family}`);
  }
}


export function chunk(bytes: Uint8Array, seed: number): Uint8Array[] {
  const rnd = prng(seed);
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length;) {
    const n = 1 + Math.floor(rnd() * 16);
    out.push(bytes.subarray(at, at + n));
    at += n;
  }
  return out;
}

/** Parse once keeping every event (for the correctness check). */
function parseAll(family: string, chunks: Uint8Array[]): StreamEvent[] {
  const p = createByteParser(family);
  const out: StreamEvent[] = [];
  for (const c of chunks) {
    const evs = p.push(c);
    for (let i = 0; i < evs.length; i++) out.push(evs[i]);
  }
  for (const e of p.end()) out.push(e);
  return out;
}

/**
 * The timed path: a consumer that handles each push's events as they come (as the engine does)
 * and keeps none of them, so the figure is the parser's cost, not the cost of retaining ~120k
 * event objects (which makes the garbage collector, not the parser, grow with size).
 */
function parseStreaming(family: string, chunks: Uint8Array[]): number {
  const p = createByteParser(family);
  let n = 0;
  for (const c of chunks) n += p.push(c).length;
  return n + p.end().length;
}

function check(family: string, evs: StreamEvent[], content: string): void {
  let name: string | undefined;
  const args: string[] = [];
  let completes = 0;
  for (const e of evs) {
    if (e.type === 'call.identity' && e.name) name = e.name;
    else if (e.type === 'call.fragment') args.push(e.text);
    else if (e.type === 'call.complete') completes++;
  }
  const parsed = JSON.parse(args.join('')) as { path?: string; content?: string };
  if (
    name !== 'write_file' ||
    completes !== 1 ||
    parsed.path !== 'out/big.txt' ||
    parsed.content !== content
  ) {
    throw new Error(
      `bench/parsers: ${family} did not parse the call back (name ${name}, completes ${completes})`,
    );
  }
}

function cpuMs(fn: () => void): number {
  const c0 = process.cpuUsage();
  fn();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}

/** Best time of the first and of the last tenth of the pushes, over a few runs. */
function tailRatio(family: string, chunks: Uint8Array[], runs: number): number {
  const tenth = Math.max(1, Math.floor(chunks.length / 10));
  let first = Infinity;
  let last = Infinity;
  for (let r = 0; r < runs; r++) {
    const p = createByteParser(family);
    const t0 = performance.now();
    for (let i = 0; i < tenth; i++) p.push(chunks[i]);
    first = Math.min(first, performance.now() - t0);
    for (let i = tenth; i < chunks.length - tenth; i++) p.push(chunks[i]);
    const t1 = performance.now();
    for (let i = chunks.length - tenth; i < chunks.length; i++) p.push(chunks[i]);
    last = Math.min(last, performance.now() - t1);
    p.end();
  }
  return last / first;
}

function measure(
  family: string,
  size: number,
  budgetMs: number,
  seed: number,
): { ms: number; bytes: number; chunks: number; runs: number; tail: number } {
  const content = bigValue(size);
  const bytes = new TextEncoder().encode(callStream(family, content));
  const chunks = chunk(bytes, seed);
  check(family, parseAll(family, chunks), content);
  for (let i = 0; i < 2; i++) parseStreaming(family, chunks); // warm-up
  const samples: number[] = [];
  const t0 = performance.now();
  while (samples.length < 5 || (performance.now() - t0 < budgetMs && samples.length < 15)) {
    samples.push(cpuMs(() => parseStreaming(family, chunks)));
  }
  const tail = tailRatio(family, chunks, 5);
  return { ms: Math.min(...samples), bytes: bytes.length, chunks: chunks.length, runs: samples.length, tail };
}

export async function benchParsers(opts: ParsersBenchOptions = {}): Promise<Row[]> {
  const sizes = opts.sizes ?? [100_000, 1_000_000];
  const budgetMs = opts.budgetMs ?? 1500;
  const seed = opts.seed ?? 11;
  const families = opts.families ?? listFamilies().map((f) => f.name);
  const rows: Row[] = [];
  for (const family of families) {
    const small = measure(family, sizes[0], budgetMs, seed);
    const large = measure(family, sizes[sizes.length - 1], budgetMs, seed);
    const perByteSmall = small.ms / small.bytes;
    const perByteLarge = large.ms / large.bytes;
    rows.push({
      family,
      bytes: large.bytes,
      chunks: large.chunks,
      ms100k: round(small.ms),
      ms1m: round(large.ms),
      msPerMB: round((large.ms * 1_000_000) / large.bytes),
      growth: round(perByteLarge / perByteSmall, 2),
      tailRatio: round(large.tail, 2),
      runs: small.runs + large.runs,
    });
    await new Promise((r) => setImmediate(r));
  }
  return rows;
}

function round(x: number, digits = 1): number {
  const k = 10 ** digits;
  return Math.round(x * k) / k;
}

export function formatRows(rows: Row[]): string {
  const head = [
    'family',
    'stream bytes',
    'chunks (1–16 B)',
    'ms @100 KB',
    'ms @1 MB',
    'ms per MB',
    'growth 100 KB→1 MB',
    'last/first 10%',
  ];
  const body = rows.map((r) => [
    r.family,
    String(r.bytes),
    String(r.chunks),
    String(r.ms100k),
    String(r.ms1m),
    String(r.msPerMB),
    r.growth.toFixed(2),
    r.tailRatio.toFixed(2),
  ]);
  const w = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  ');
  return [line(head), ...body.map(line)].join('\n') + '\n';
}

if (require.main === module) {
  const quick = process.argv.includes('--quick');
  const json = process.argv.includes('--json');
  benchParsers(quick ? { budgetMs: 150 } : {})
    .then((rows) => process.stdout.write(json ? JSON.stringify(rows, null, 2) + '\n' : formatRows(rows)))
    .catch((e: unknown) => {
      process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
      process.exit(1);
    });
}
