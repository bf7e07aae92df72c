/**
 * Reading what a deployment recorded into `ReportTurn`s (src/report/model.ts):
 *
 * - **OTLP JSON** — `ExportTraceServiceRequest` objects (what an OTLP/HTTP JSON receiver gets, or
 *   the collector's `file` exporter writes): one per file or one per line. The gateway's SERVER
 *   spans (attribute `sluice.inbound_api`) and the library's `sluice.turn` spans become turns;
 *   other spans are ignored.
 * - **Gateway JSON logs** — `sluice serve` stderr: the `turn` records (other records ignored).
 * - **Journals** — src/journal file-store files (`<crc32> <record JSON>` lines), read-only.
 *
 * Never reads contents: journals hold call inputs and results, but only kinds, times, ids, names,
 * safety and synthetic reasons are taken. A file that is none of these is a `ReportInputError`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkTrace } from '../history/check';
import { decodeJournal } from '../journal/codec';
import type { JournalRecord } from '../journal/records';
import { journalTrace } from '../journal/state';
import * as N from '../telemetry/names';
import { type ReportCall, type ReportTurn, realSavedMs } from './model';

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

export interface ReadResult {
  turns: ReportTurn[];
  /** Files read. */
  inputs: number;
  /** Lines skipped as unreadable (partial last lines, foreign text), per file. */
  skipped: { file: string; lines: number }[];
}

/** Every file under the given paths (directories: their files, recursively, sorted). */
function listFiles(paths: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (p: string, top: boolean): void => {
    let st: fs.Stats;
    try {
      st = fs.statSync(p);
    } catch {
      throw new ReportInputError(`${p}: no such file or directory`);
    }
    if (st.isDirectory()) {
      for (const name of fs.readdirSync(p).sort()) if (!name.startsWith('.')) walk(path.join(p, name), false);
    } else if (st.isFile()) out.push(p);
    else if (top) throw new ReportInputError(`${p}: not a regular file or directory`);
  };
  for (const p of paths) walk(p, true);
  return out;
}

export function readInputs(paths: readonly string[]): ReadResult {
  const files = listFiles(paths);
  if (files.length === 0) throw new ReportInputError(`no input files in ${paths.join(', ')}`);
  const turns: ReportTurn[] = [];
  const skipped: ReadResult['skipped'] = [];
  const seen = new Set<string>();
  for (const file of files) {
    const r = readFile(file);
    if (r.skipped > 0) skipped.push({ file, lines: r.skipped });
    for (const t of r.turns) {
      // One gateway request recorded twice (its log and its span) counts once.
      const key = t.ref.startsWith('req_') ? t.ref : `${file}#${t.ref}`;
      if (seen.has(key)) continue;
      seen.add(key);
      turns.push(t);
    }
  }
  return { turns, inputs: files.length, skipped };
}

function readFile(file: string): { turns: ReportTurn[]; skipped: number } {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch (e) {
    throw new ReportInputError(`${file}: cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const text = buf.toString('utf8');
  const head = text.trimStart().slice(0, 200);
  if (/^[0-9a-f]{8} \{/.test(head)) return { turns: [journalTurn(file, buf)], skipped: 0 };
  if (!head.startsWith('{')) throw new ReportInputError(`${file}: not an OTLP JSON file, a sluice gateway log or a journal`);
  // One JSON document (pretty-printed OTLP), or JSON lines.
  let whole: unknown;
  try {
    whole = JSON.parse(text);
  } catch {
    whole = undefined;
  }
  const docs: unknown[] = [];
  let skipped = 0;
  if (whole !== undefined) docs.push(whole);
  else
    for (const line of text.split('\n')) {
      const l = line.trim();
      if (l === '') continue;
      try {
        docs.push(JSON.parse(l));
      } catch {
        skipped++;
      }
    }
  const turns: ReportTurn[] = [];
  let recognized = false;
  docs.forEach((d, i) => {
    if (!isObject(d)) return;
    if (Array.isArray(d.resourceSpans)) {
      recognized = true;
      turns.push(...otlpTurns(d.resourceSpans, `${file}:${i + 1}`));
    } else if (typeof d.msg === 'string' && typeof d.level === 'string') {
      recognized = true;
      if (d.msg === TURN_RECORD) turns.push(logTurn(d, `${file}:${i + 1}`));
    } else if (Array.isArray(d.resourceMetrics) || Array.isArray(d.resourceLogs)) recognized = true;
  });
  if (!recognized) throw new ReportInputError(`${file}: not an OTLP JSON file, a sluice gateway log or a journal`);
  return { turns, skipped };
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
  return turn;
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

function otlpTurns(resourceSpans: unknown[], ref: string): ReportTurn[] {
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
    if (a.has(GW_INBOUND_API)) turns.push(gatewaySpanTurn(s, a, ref));
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
  return turn;
}

function librarySpanTurn(s: OtlpSpan, a: Map<string, unknown>, ref: string): ReportTurn {
  const attempts = num(a.get(N.ATTR_TURN_ATTEMPTS)) ?? 1;
  // Calls of the last attempt, by index: release, result and shadow events merged.
  const byIndex = new Map<number, ReportCall>();
  const synthetic = new Map<string, string>();
  let aborted = false;
  for (const e of s.events ?? []) {
    if (e.name === N.EVENT_ABORT) aborted = true;
    const ea = attrs(e.attributes);
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
  if (streamEnd !== undefined) {
    turn.streamEndMs = streamEnd;
    const saved = shadow ? num(a.get(N.ATTR_TURN_SHADOW_SAVED_MS)) : (num(a.get(N.ATTR_TURN_SAVED_MS)) ?? realSavedMs(streamEnd, calls));
    if (saved !== undefined) turn.savedMs = saved;
  }
  return turn;
}

// ------------------------------------------------------------------ journals

function journalTurn(file: string, buf: Buffer): ReportTurn {
  let records: JournalRecord[];
  try {
    records = decodeJournal(buf, file).records;
  } catch (e) {
    throw new ReportInputError((e as Error).message);
  }
  const header = records.find((r): r is Extract<JournalRecord, { k: 'turn' }> => r.k === 'turn');
  if (!header) throw new ReportInputError(`${file}: a journal without its turn header record`);
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
      if (saved !== undefined) turn.savedMs = saved;
    }
  }
  return turn;
}
