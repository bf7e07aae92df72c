/**
 * Reading what a deployment recorded into the report (src/report/model.ts):
 *
 * - **OTLP JSON** — `ExportTraceServiceRequest` objects (what an OTLP/HTTP JSON receiver gets, or
 *   the collector's `file` exporter writes): one per file or one per line. The gateway's SERVER
 *   spans (attribute `sluice.inbound_api`) and the library's `sluice.turn` spans become turns;
 *   other spans are ignored.
 * - **Gateway JSON logs** — `sluice serve` stderr: the `turn` records (other records ignored),
 *   and their A/B fields (`arm`, `continues`) for the gateway's saving.
 * - **Journals** — src/journal file-store files (`<crc32> <record JSON>` lines), read-only. A
 *   signed journal (MAC chain) is checked with the key, or refused without one unless the caller
 *   asked to read it unchecked (`verify: 'skip'`).
 *
 * Files are streamed line by line (1 MiB reads, one line at a time; a line longer than
 * `maxLineBytes` is skipped as unreadable) and every turn is folded into the `ReportBuilder` as it
 * is read, so memory stays bounded however long a log is. Only a file that is one pretty-printed
 * JSON document, and a journal, are read whole (up to `maxLineBytes`).
 *
 * Never reads contents: journals hold call inputs and results, but only kinds, times, ids, names,
 * safety and synthetic reasons are taken. A file that is none of these is a `ReportInputError`.
 */
import * as fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { checkTrace } from '../history/check';
import { decodeJournal } from '../journal/codec';
import { macChainBreak, type MacVerify, requireKeyForSigned } from '../journal/mac';
import { JournalError, type JournalRecord } from '../journal/records';
import { journalTrace } from '../journal/state';
import * as N from '../telemetry/names';
import { Walker, WalkError } from '../walk';
import { type ReportBuilder, type ReportCall, type ReportContinuation, type ReportTurn, realSavedMs, turnEndOf } from './model';

export class ReportInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReportInputError';
  }
}

/** Gateway-only span attributes (src/telemetry/gateway.ts GATEWAY_ATTR; not imported: that module loads the OTel API). */
const GW_INBOUND_API = 'sluice.inbound_api';
const GW_UPSTREAM_MODEL = 'sluice.upstream.model';
const GW_REQUEST_ID = 'sluice.request_id';
/** The gateway log's per-turn record (src/gateway/log.ts TURN_RECORD). */
const TURN_RECORD = 'turn';
/** Stream-integrity error types (SPEC §12) and the log's `backendEnd` values counted as truncated. */
const TRUNCATED = new Set(['stream_truncated', 'bad_stream', 'truncated']);

/** The longest line (or whole pretty-printed document, or journal) read: 256 MiB. */
export const DEFAULT_MAX_LINE_BYTES = 256 * 1024 * 1024;
const CHUNK = 1024 * 1024;

export interface ReadOptions {
  /** The journal MAC key (SLUICE_JOURNAL_KEY): signed journals are checked with it. */
  journalKey?: Buffer;
  /** 'skip': read signed journals without a key, unchecked (the CLI's --unchecked). */
  verify?: MacVerify;
  maxLineBytes?: number;
}

export interface ReadResult {
  /** Files read. */
  inputs: number;
  /** Lines skipped as unreadable (partial last lines, foreign text, over-long lines), per file. */
  skipped: { file: string; lines: number }[];
  /** One line each: directory links skipped by the walk, signed journals read unchecked. */
  warnings: string[];
}

/** Read every file under `paths` into `builder`. */
export function readInputs(paths: readonly string[], builder: ReportBuilder, opts: ReadOptions = {}): ReadResult {
  const walker = new Walker();
  try {
    for (const p of paths) walker.add(p);
  } catch (e) {
    if (e instanceof WalkError) throw new ReportInputError(e.message);
    throw e;
  }
  const files = walker.files;
  if (files.length === 0) throw new ReportInputError(`no input files in ${paths.join(', ')}`);
  const warnings: string[] = [];
  const w = walker.warning();
  if (w !== undefined) warnings.push(w);
  const skipped: ReadResult['skipped'] = [];
  const seen = new Set<string>();
  // A/B samples by answering request (a request in the logs and in the spans counts once), and
  // each gateway span's format and model by request id, to place a span's sample under the
  // response it continues (spans name that response by id only).
  const answered = new Set<string>();
  const spanRows = new Map<string, { format: string; model: string }>();
  const pending: SpanContinuation[] = [];
  const sink: Sink = {
    turn: (t) => {
      // One gateway request recorded twice (its log and its span) counts once.
      if (t.ref.startsWith('req_')) {
        if (t.source === 'otlp-gateway') spanRows.set(t.ref, { format: t.format, model: t.model });
        if (seen.has(t.ref)) return;
        seen.add(t.ref);
      }
      builder.addTurn(t);
    },
    continuation: (c) => {
      if (answered.has(c.ref)) return;
      answered.add(c.ref);
      builder.addContinuation(c);
    },
    spanContinuation: (c) => pending.push(c),
  };
  let unchecked = 0;
  for (const file of files) {
    const r = readFile(file, sink, opts);
    if (r.skipped > 0) skipped.push({ file, lines: r.skipped });
    if (r.unchecked) unchecked++;
  }
  for (const { earlierId, ...c } of pending) sink.continuation({ ...c, ...(spanRows.get(earlierId) ?? {}) });
  if (unchecked > 0) warnings.push(`read ${unchecked} signed journal${unchecked === 1 ? '' : 's'} unchecked (no SLUICE_JOURNAL_KEY, --unchecked)`);
  return { inputs: files.length, skipped, warnings };
}

interface Sink {
  turn(t: ReportTurn): void;
  continuation(c: ReportContinuation): void;
  /** A gateway span's A/B sample: the earlier response is named by id only (resolved at the end). */
  spanContinuation(c: SpanContinuation): void;
}

/** From a SERVER span: `sluice.continues.*` (arm, turn and gap times, the earlier request's id). */
interface SpanContinuation extends ReportContinuation {
  earlierId: string;
}

function openError(file: string, e: unknown): ReportInputError {
  return new ReportInputError(`${file}: cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
}

/**
 * Call `fn` with each line of the open file (without its newline), reading 1 MiB at a time. A line
 * longer than `maxLine` characters is passed as undefined (its text is dropped as it streams by).
 */
function forEachLine(fd: number, file: string, maxLine: number, fn: (line: string | undefined) => void): void {
  const dec = new StringDecoder('utf8');
  const buf = Buffer.allocUnsafe(CHUNK);
  let carry: string[] = [];
  let carried = 0;
  let overlong = false;
  const emit = (tail: string): void => {
    if (overlong || carried + tail.length > maxLine) fn(undefined);
    else fn(carry.length === 0 ? tail : carry.join('') + tail);
    carry = [];
    carried = 0;
    overlong = false;
  };
  for (;;) {
    let n: number;
    try {
      n = fs.readSync(fd, buf, 0, buf.length, null);
    } catch (e) {
      throw openError(file, e);
    }
    const text = n === 0 ? dec.end() : dec.write(buf.subarray(0, n));
    let pos = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', pos)) {
      emit(text.slice(pos, nl));
      pos = nl + 1;
    }
    if (pos < text.length && !overlong) {
      const rest = text.slice(pos);
      carried += rest.length;
      if (carried > maxLine) {
        overlong = true;
        carry = [];
      } else carry.push(rest);
    }
    if (n === 0) {
      if (carried > 0 || overlong) emit('');
      return;
    }
  }
}

/** The whole file as bytes, refused when over `max`. */
function readWhole(file: string, max: number): Buffer {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (e) {
    throw openError(file, e);
  }
  if (st.size > max) throw new ReportInputError(`${file}: ${st.size} bytes, over the ${max}-byte limit for a journal or a one-document JSON file`);
  try {
    return fs.readFileSync(file);
  } catch (e) {
    throw openError(file, e);
  }
}

const NOT_AN_INPUT = 'not an OTLP JSON file, a sluice gateway log or a journal';

function readFile(file: string, sink: Sink, opts: ReadOptions): { skipped: number; unchecked?: boolean } {
  const max = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (e) {
    throw openError(file, e);
  }
  try {
    const headBuf = Buffer.alloc(200);
    let n: number;
    try {
      n = fs.readSync(fd, headBuf, 0, headBuf.length, 0);
    } catch (e) {
      throw openError(file, e);
    }
    const head = headBuf.subarray(0, n).toString('utf8').trimStart();
    if (/^[0-9a-f]{8} \{/.test(head)) return journalTurn(file, readWhole(file, max), sink, opts);
    if (!head.startsWith('{')) throw new ReportInputError(`${file}: ${NOT_AN_INPUT}`);
    let recognized = false;
    let skipped = 0;
    let docs = 0;
    let pretty = false;
    const take = (d: unknown, ref: string): void => {
      if (handleDoc(d, ref, sink)) recognized = true;
    };
    forEachLine(fd, file, max, (line) => {
      if (pretty) return;
      const l = line?.trim();
      if (l === '') return;
      let d: unknown;
      try {
        d = l === undefined ? undefined : JSON.parse(l);
      } catch {
        d = undefined;
      }
      if (d === undefined) {
        // The first line is not JSON on its own: the file may be one pretty-printed document.
        if (docs === 0 && skipped === 0) pretty = true;
        else skipped++;
        return;
      }
      take(d, `${file}:${++docs}`);
    });
    if (pretty) {
      const text = readWhole(file, max).toString('utf8');
      let whole: unknown;
      try {
        whole = JSON.parse(text);
      } catch {
        whole = undefined;
      }
      if (whole !== undefined) take(whole, `${file}:1`);
      else
        text.split('\n').forEach((line, i) => {
          const l = line.trim();
          if (l === '') return;
          try {
            take(JSON.parse(l), `${file}:${i + 1}`);
          } catch {
            skipped++;
          }
        });
    }
    if (!recognized) throw new ReportInputError(`${file}: ${NOT_AN_INPUT}`);
    return { skipped };
  } finally {
    fs.closeSync(fd);
  }
}

/** One JSON document into the sink; false when it is none of the recognised kinds. */
function handleDoc(d: unknown, ref: string, sink: Sink): boolean {
  if (!isObject(d)) return false;
  if (Array.isArray(d.resourceSpans)) {
    for (const t of otlpTurns(d.resourceSpans, ref, sink)) sink.turn(t);
    return true;
  }
  if (typeof d.msg === 'string' && typeof d.level === 'string') {
    if (d.msg === TURN_RECORD) {
      const t = logTurn(d, ref);
      sink.turn(t);
      const c = continuationOf(d, t.ref);
      if (c) sink.continuation(c);
    }
    return true;
  }
  return Array.isArray(d.resourceMetrics) || Array.isArray(d.resourceLogs);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

// ------------------------------------------------------------------ gateway log

function logTurn(r: Record<string, unknown>, ref: string): ReportTurn {
  const calls: ReportCall[] = [];
  if (Array.isArray(r.calls))
    for (const c of r.calls) {
      if (!isObject(c)) continue;
      const call: ReportCall = {};
      const id = str(c.id);
      const name = str(c.name);
      const complete = num(c.completeMs);
      const released = num(c.releasedMs);
      if (id !== undefined) call.id = id;
      if (name !== undefined) call.name = name;
      if (complete !== undefined) call.completeMs = complete;
      if (released !== undefined) call.releasedMs = released;
      calls.push(call);
    }
  const outcome = str(r.outcome) ?? 'unknown';
  const turn: ReportTurn = {
    source: 'gateway-log',
    ref: str(r.reqId) ?? ref,
    format: str(r.format) ?? 'unknown',
    model: str(r.upstreamModel) ?? str(r.model) ?? 'unknown',
    mode: 'gateway',
    outcome,
    attempts: num(r.attempts) ?? 1,
    aborted: outcome === 'client_disconnect',
    calls,
    violations: num(r.violations) ?? 0,
  };
  const end = num(r.streamEndMs);
  if (end !== undefined) turn.streamEndMs = end;
  const backendEnd = str(r.backendEnd);
  if ((backendEnd !== undefined && TRUNCATED.has(backendEnd)) || TRUNCATED.has(str(r.errorType) ?? '')) turn.truncated = true;
  return turn;
}

/**
 * The A/B sample on a request that answers the tool calls of an earlier response:
 * `continues: { requestId, arm, format, model, turnMs, gapMs, calls }` (arm, format and model of
 * the EARLIER response; turnMs its arrival → backend stream end; gapMs that end → this arrival).
 */
function continuationOf(r: Record<string, unknown>, ref: string): ReportContinuation | undefined {
  const c = r.continues;
  if (!isObject(c)) return undefined;
  const arm = c.arm;
  const turnMs = num(c.turnMs);
  const gapMs = num(c.gapMs);
  if ((arm !== 'early' && arm !== 'holdout') || turnMs === undefined || gapMs === undefined || gapMs < 0) return undefined;
  return { ref, arm, format: str(c.format) ?? 'unknown', model: str(c.model) ?? 'unknown', turnMs, gapMs };
}

// ------------------------------------------------------------------ OTLP JSON

interface OtlpAttr {
  key: string;
  value?: Record<string, unknown>;
}
interface OtlpEvent {
  name?: string;
  attributes?: OtlpAttr[];
}
interface OtlpSpan {
  traceId?: string;
  spanId?: string;
  parentSpanId?: string;
  name?: string;
  attributes?: OtlpAttr[];
  events?: OtlpEvent[];
}

/** An OTLP `AnyValue` as a plain value (int64 arrives as a string in OTLP JSON). */
function anyValue(v: Record<string, unknown> | undefined): unknown {
  if (!v) return undefined;
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return Number(v.doubleValue);
  if ('boolValue' in v) return v.boolValue;
  if ('arrayValue' in v && isObject(v.arrayValue) && Array.isArray(v.arrayValue.values))
    return (v.arrayValue.values as Record<string, unknown>[]).map((x) => anyValue(x));
  return undefined;
}

function attrs(list: OtlpAttr[] | undefined): Map<string, unknown> {
  const m = new Map<string, unknown>();
  if (Array.isArray(list)) for (const a of list) if (a && typeof a.key === 'string') m.set(a.key, anyValue(a.value));
  return m;
}

function otlpTurns(resourceSpans: unknown[], ref: string, sink: Sink): ReportTurn[] {
  const spans: OtlpSpan[] = [];
  for (const rs of resourceSpans) {
    if (!isObject(rs) || !Array.isArray(rs.scopeSpans)) continue;
    for (const ss of rs.scopeSpans) if (isObject(ss) && Array.isArray(ss.spans)) for (const s of ss.spans) if (isObject(s)) spans.push(s as OtlpSpan);
  }
  const turns: ReportTurn[] = [];
  // The gateway's request span is the turn; the library turn span the gateway opens under it is not another one.
  const gateway = new Set<string>();
  const parsed = spans.map((s) => ({ s, a: attrs(s.attributes) }));
  for (const { s, a } of parsed) if (a.has(GW_INBOUND_API) && s.spanId) gateway.add(s.spanId);
  for (const { s, a } of parsed) {
    if (a.has(GW_INBOUND_API)) {
      const t = gatewaySpanTurn(s, a, ref);
      turns.push(t);
      const c = spanContinuationOf(a, t);
      if (c) sink.spanContinuation(c);
    }
    else if (s.name === N.SPAN_TURN && !(s.parentSpanId && gateway.has(s.parentSpanId)) && a.get(N.ATTR_EARLY_START) !== 'gateway')
      turns.push(librarySpanTurn(s, a, ref));
  }
  return turns;
}

function callFrom(a: Map<string, unknown>): ReportCall {
  const c: ReportCall = {};
  const set = <K extends keyof ReportCall>(k: K, v: ReportCall[K] | undefined): void => {
    if (v !== undefined) c[k] = v;
  };
  set('id', str(a.get(N.ATTR_GEN_AI_TOOL_CALL_ID)));
  set('name', str(a.get(N.ATTR_GEN_AI_TOOL_NAME)));
  set('completeMs', num(a.get(N.ATTR_CALL_COMPLETE_MS)));
  set('releasedMs', num(a.get(N.ATTR_CALL_RELEASED_MS)));
  set('startedMs', num(a.get(N.ATTR_CALL_STARTED_MS)));
  set('resultMs', num(a.get(N.ATTR_CALL_RESULT_MS)));
  set('shadowStartMs', num(a.get(N.ATTR_CALL_SHADOW_START_MS)));
  set('synthetic', str(a.get(N.ATTR_SYNTHETIC_REASON)));
  return c;
}

/** The A/B sample on a gateway SERVER span (`sluice.continues.*`; format and model resolved later). */
function spanContinuationOf(a: Map<string, unknown>, t: ReportTurn): SpanContinuation | undefined {
  const earlierId = str(a.get(N.ATTR_CONTINUES_REQUEST_ID));
  const arm = a.get(N.ATTR_CONTINUES_ARM);
  const turnMs = num(a.get(N.ATTR_CONTINUES_TURN_MS));
  const gapMs = num(a.get(N.ATTR_CONTINUES_GAP_MS));
  if (earlierId === undefined || (arm !== 'early' && arm !== 'holdout') || turnMs === undefined || gapMs === undefined || gapMs < 0) return undefined;
  // Until the earlier span is found: the answering request's own format and model.
  return { ref: t.ref, earlierId, arm, format: t.format, model: t.model, turnMs, gapMs };
}

function gatewaySpanTurn(s: OtlpSpan, a: Map<string, unknown>, ref: string): ReportTurn {
  const calls = (s.events ?? []).filter((e) => e.name === N.EVENT_CALL_RELEASED).map((e) => callFrom(attrs(e.attributes)));
  const outcome = str(a.get(N.ATTR_TURN_OUTCOME)) ?? 'unknown';
  const turn: ReportTurn = {
    source: 'otlp-gateway',
    ref: str(a.get(GW_REQUEST_ID)) ?? `${ref}/${s.spanId ?? ''}`,
    format: str(a.get(N.ATTR_FORMAT)) ?? 'unknown',
    model: str(a.get(GW_UPSTREAM_MODEL)) ?? str(a.get(N.ATTR_GEN_AI_REQUEST_MODEL)) ?? 'unknown',
    mode: 'gateway',
    outcome,
    attempts: num(a.get(N.ATTR_TURN_ATTEMPTS)) ?? 1,
    aborted: outcome === 'client_disconnect',
    calls,
    violations: num(a.get(N.ATTR_TURN_INVARIANT_VIOLATIONS)) ?? 0,
  };
  const end = num(a.get(N.ATTR_TURN_STREAM_END_MS));
  if (end !== undefined) turn.streamEndMs = end;
  if (TRUNCATED.has(str(a.get(N.ATTR_ERROR_TYPE)) ?? '')) turn.truncated = true;
  return turn;
}

function librarySpanTurn(s: OtlpSpan, a: Map<string, unknown>, ref: string): ReportTurn {
  const attempts = num(a.get(N.ATTR_TURN_ATTEMPTS)) ?? 1;
  // Calls of the last attempt, by index: release, result and shadow events merged.
  const byIndex = new Map<number, ReportCall>();
  const synthetic = new Map<string, string>();
  let aborted = false;
  let truncated = TRUNCATED.has(str(a.get(N.ATTR_ERROR_TYPE)) ?? '');
  for (const e of s.events ?? []) {
    if (e.name === N.EVENT_ABORT) aborted = true;
    const ea = attrs(e.attributes);
    // A retry after a truncated attempt: the backend cut a stream short.
    if (e.name === N.EVENT_ATTEMPT_RETRY && TRUNCATED.has(str(ea.get(N.ATTR_ERROR_TYPE)) ?? '')) truncated = true;
    if (e.name === N.EVENT_SYNTHETIC_RESULT) {
      const id = str(ea.get(N.ATTR_GEN_AI_TOOL_CALL_ID));
      const why = str(ea.get(N.ATTR_SYNTHETIC_REASON));
      if (id !== undefined && why !== undefined) synthetic.set(id, why);
      continue;
    }
    if (e.name !== N.EVENT_CALL_RELEASED && e.name !== N.EVENT_CALL_RESULT && e.name !== N.EVENT_CALL_SHADOW) continue;
    if ((num(ea.get(N.ATTR_CALL_ATTEMPT)) ?? attempts) !== attempts) continue;
    const index = num(ea.get(N.ATTR_CALL_INDEX));
    if (index === undefined) continue;
    const c = byIndex.get(index) ?? {};
    for (const [k, v] of Object.entries(callFrom(ea)) as [keyof ReportCall, never][]) if (c[k] === undefined) c[k] = v;
    byIndex.set(index, c);
  }
  const streamEnd = num(a.get(N.ATTR_TURN_STREAM_END_MS));
  const calls = [...byIndex.entries()].sort((x, y) => x[0] - y[0]).map(([, c]) => c);
  for (const c of calls) {
    if (c.synthetic === undefined && c.id !== undefined && synthetic.has(c.id)) c.synthetic = synthetic.get(c.id)!;
    // Spans do not carry safety: under 'safe', a call that started while the stream ran was safe.
    if (c.startedMs !== undefined && streamEnd !== undefined) c.safe = c.startedMs < streamEnd;
  }
  const shadow = str(a.get(N.ATTR_EARLY_START)) === 'shadow';
  const turn: ReportTurn = {
    source: 'otlp-turn',
    ref: `${ref}/${s.spanId ?? ''}`,
    format: str(a.get(N.ATTR_FORMAT)) ?? 'unknown',
    model: str(a.get(N.ATTR_GEN_AI_REQUEST_MODEL)) ?? str(a.get(N.ATTR_GEN_AI_RESPONSE_MODEL)) ?? 'unknown',
    mode: shadow ? 'shadow' : 'real',
    outcome: str(a.get(N.ATTR_TURN_OUTCOME)) ?? 'unknown',
    attempts,
    aborted,
    calls,
    violations: num(a.get(N.ATTR_TURN_INVARIANT_VIOLATIONS)) ?? 0,
  };
  if (truncated) turn.truncated = true;
  if (streamEnd !== undefined) {
    turn.streamEndMs = streamEnd;
    const saved = shadow ? num(a.get(N.ATTR_TURN_SHADOW_SAVED_MS)) : (num(a.get(N.ATTR_TURN_SAVED_MS)) ?? realSavedMs(streamEnd, calls));
    const done = num(a.get(N.ATTR_TURN_DONE_MS)) ?? turnEndOf(streamEnd, calls);
    if (saved !== undefined) {
      turn.savedMs = saved;
      // Without early dispatch: the real end (shadow: it ran so), or the real end + the saving.
      turn.baselineMs = shadow ? done : done + saved;
    }
  }
  return turn;
}

// ------------------------------------------------------------------ journals

function journalTurn(file: string, buf: Buffer, sink: Sink, opts: ReadOptions): { skipped: number; unchecked: boolean } {
  let records: JournalRecord[];
  try {
    records = decodeJournal(buf, file).records;
  } catch (e) {
    throw new ReportInputError((e as Error).message);
  }
  const header = records.find((r): r is Extract<JournalRecord, { k: 'turn' }> => r.k === 'turn');
  if (!header) throw new ReportInputError(`${file}: a journal without its turn header record`);
  // Signed means checked: verified with the key, refused without one unless read unchecked on purpose.
  try {
    requireKeyForSigned(records, opts.journalKey, opts.verify ?? 'check', file);
  } catch (e) {
    if (e instanceof JournalError) throw new ReportInputError(e.message);
    throw e;
  }
  if (opts.journalKey !== undefined && opts.verify !== 'skip') {
    const broken = macChainBreak(records, opts.journalKey, header.turn);
    if (broken) throw new ReportInputError(`${file}: journal refused at record ${broken.record}: ${broken.reason}`);
  }
  const unchecked = opts.journalKey === undefined && records.some((r) => typeof r.m === 'string');
  let last = 0;
  for (const r of records) if (r.k === 'attempt' && r.a > last) last = r.a;
  const calls = new Map<number, ReportCall>();
  const call = (i: number): ReportCall => {
    let c = calls.get(i);
    if (!c) calls.set(i, (c = {}));
    return c;
  };
  let streamEnd: number | undefined;
  let aborted = false;
  let outcome = 'unfinished';
  for (const r of records) {
    if (r.k === 'aborted') aborted = true;
    if (r.k === 'committed') outcome = r.outcome;
    if (!('a' in r) || r.a !== last) continue;
    if (r.k === 'end') streamEnd = r.t;
    else if (r.k === 'released') {
      const c = call(r.i);
      c.id = r.id;
      c.name = r.name;
      c.releasedMs = r.t;
      c.safe = r.safe;
    } else if (r.k === 'started') call(r.i).startedMs ??= r.t;
    else if (r.k === 'result') {
      const c = call(r.i);
      c.resultMs = r.t;
      if (r.synthetic !== undefined) c.synthetic = r.synthetic;
    }
  }
  const meta = header.meta ?? {};
  // The header's policy; a shadow-mode turn runs as 'none', so its writer says so in meta.earlyStart.
  const shadow = (header.earlyStart as string | undefined) === 'shadow' || meta.earlyStart === 'shadow';
  const list = [...calls.entries()].sort((x, y) => x[0] - y[0]).map(([, c]) => c).filter((c) => c.releasedMs !== undefined);
  const turn: ReportTurn = {
    source: 'journal',
    ref: header.turn,
    format: header.format ?? 'unknown',
    model: str(meta.model) ?? 'unknown',
    mode: shadow ? 'shadow' : 'real',
    outcome,
    attempts: Math.max(1, last),
    aborted,
    calls: list,
    violations: checkTrace(journalTrace(records), { earlyStart: shadow ? 'none' : (header.earlyStart ?? 'safe') }).violations.length,
  };
  if (streamEnd !== undefined) {
    turn.streamEndMs = streamEnd;
    // Journals do not record shadow projections: the saving is real-only.
    if (!shadow) {
      const saved = realSavedMs(streamEnd, list);
      if (saved !== undefined) {
        turn.savedMs = saved;
        turn.baselineMs = turnEndOf(streamEnd, list) + saved;
      }
    }
  }
  sink.turn(turn);
  return { skipped: 0, unchecked };
}
