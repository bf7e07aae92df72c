import { detectFormat, readPayloadLines, SseDecoder } from '../wire';
import { DYNAMO_NAMED_EVENTS } from '../wire/dynamo';
import { findFormatMismatch } from '../wire/detect';
import type { WireFormat } from '../wire/events';

/**
 * The trace file (`.trace.jsonl`, SPEC §8): an optional header line
 *   {"sluice":"trace","format":"anthropic"|…,"tools":[…]}
 * then one line per event:
 *   {"t":ms,"data":<provider payload or "[DONE]">}
 *   {"t":ms,"error":{"type","message","retryable"?}}   a stream error (retryable ones are retried)
 *   {"t":ms,"attempt":N}                                attempt N (a retry) begins; its lines follow
 *   {"t":ms,"end":true}                                 EOF without a terminal event
 * `t` never decreases. Raw `.sse` files and one-payload-per-line `.jsonl` recordings are accepted
 * too, paced by `pace` ms per payload.
 */

export interface SimToolSpec {
  name: string;
  kind: string;
  durationMs: number;
  result?: string;
  error?: string;
  needsApproval?: boolean;
}

export type TraceLine =
  | { t: number; kind: 'data'; data: unknown }
  | { t: number; kind: 'error'; error: { type: string; message: string }; retryable?: boolean }
  | { t: number; kind: 'end' };

export interface TraceAttempt {
  startMs: number;
  lines: TraceLine[];
}

export interface Trace {
  format: WireFormat;
  tools?: SimToolSpec[];
  attempts: TraceAttempt[];
  /** Where the lines came from: a sluice trace, raw SSE, or payload-per-line JSONL. */
  source: 'trace' | 'sse' | 'jsonl';
}

export class TraceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TraceError';
  }
}

export interface ParseTraceOptions {
  format?: WireFormat;
  /** Milliseconds between payloads for raw `.sse` / `.jsonl` inputs (default 10). */
  paceMs?: number;
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function looksLikeSse(text: string): boolean {
  return /^(event|data|id|retry)\s*:|^:/m.test(text.slice(0, 4096)) && !text.trimStart().startsWith('{');
}

export function parseTrace(text: string, opts: ParseTraceOptions = {}): Trace {
  const pace = opts.paceMs ?? 10;
  if (text.trim().length === 0) throw new TraceError('the trace is empty');
  if (looksLikeSse(text)) return fromSse(text, pace, opts.format);

  const lines = text.split(/\r?\n/);
  let first: unknown;
  const firstLine = lines.find((l) => l.trim().length > 0) ?? '';
  try {
    first = JSON.parse(firstLine);
  } catch {
    throw new TraceError('the first line is neither JSON nor SSE; expected a .trace.jsonl, .jsonl or .sse file');
  }
  const isTrace = isObj(first) && (first.sluice === 'trace' || ('t' in first && ('data' in first || 'error' in first)));
  if (!isTrace) return fromPayloadLines(text, pace, opts.format);

  let format: WireFormat | undefined = opts.format;
  let tools: SimToolSpec[] | undefined;
  const attempts: TraceAttempt[] = [{ startMs: 0, lines: [] }];
  let lastT = 0;
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line.length === 0) return;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      throw new TraceError(`line ${i + 1}: not JSON`);
    }
    if (!isObj(v)) throw new TraceError(`line ${i + 1}: expected a JSON object`);
    if (v.sluice === 'trace') {
      if (!format && typeof v.format === 'string') format = v.format as WireFormat;
      if (Array.isArray(v.tools)) tools = v.tools.map((t, k) => checkTool(t, k));
      return;
    }
    const t = v.t;
    if (typeof t !== 'number' || !Number.isFinite(t) || t < 0) throw new TraceError(`line ${i + 1}: "t" must be a non-negative number`);
    if (t < lastT) throw new TraceError(`line ${i + 1}: "t" decreases (${t} after ${lastT})`);
    lastT = t;
    const cur = attempts[attempts.length - 1]!;
    if ('attempt' in v) {
      if (cur.lines.length === 0 && attempts.length === 1) cur.startMs = t;
      else attempts.push({ startMs: t, lines: [] });
    } else if ('data' in v) cur.lines.push({ t, kind: 'data', data: v.data });
    else if ('error' in v) {
      const e = v.error;
      if (!isObj(e)) throw new TraceError(`line ${i + 1}: "error" must be an object`);
      cur.lines.push({
        t,
        kind: 'error',
        error: { type: String(e.type ?? 'api_error'), message: String(e.message ?? 'stream error') },
        ...(typeof e.retryable === 'boolean' ? { retryable: e.retryable } : {}),
      });
    } else if (v.end === true) cur.lines.push({ t, kind: 'end' });
    else throw new TraceError(`line ${i + 1}: expected one of "data", "error", "attempt", "end"`);
  });
  if (!format) {
    format = detectFormat(
      attempts
        .flatMap((a) => a.lines)
        .filter((l) => l.kind === 'data')
        .slice(0, 50)
        .map((l) => JSON.stringify((l as { data: unknown }).data))
        .join('\n'),
    );
  }
  if (!format) throw new TraceError('could not tell the wire format; add a header line or pass --format');
  return { format, tools, attempts, source: 'trace' };
}

function checkTool(t: unknown, k: number): SimToolSpec {
  if (!isObj(t) || typeof t.name !== 'string' || t.name.length === 0)
    throw new TraceError(`tool ${k}: needs a "name"`);
  const durationMs = t.durationMs === undefined ? 0 : Number(t.durationMs);
  if (!Number.isFinite(durationMs) || durationMs < 0) throw new TraceError(`tool "${t.name}": "durationMs" must be ≥ 0`);
  return {
    name: t.name,
    kind: typeof t.kind === 'string' ? t.kind : 'other',
    durationMs,
    ...(typeof t.result === 'string' ? { result: t.result } : {}),
    ...(typeof t.error === 'string' ? { error: t.error } : {}),
    ...(t.needsApproval === true ? { needsApproval: true } : {}),
  };
}

export function parseToolSpecs(text: string): SimToolSpec[] {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new TraceError('the tools file is not JSON (expected an array of {"name","kind","durationMs",…})');
  }
  const arr = Array.isArray(v) ? v : isObj(v) && Array.isArray(v.tools) ? v.tools : undefined;
  if (!arr) throw new TraceError('the tools file must be a JSON array of tool specs');
  return arr.map((t, k) => checkTool(t, k));
}

function fromSse(text: string, pace: number, format?: WireFormat): Trace {
  const fmt = format ?? detectFormat(text);
  if (!fmt) throw new TraceError('could not tell the wire format of this SSE file; pass --format');
  const d = new SseDecoder({ dispatchDataless: true });
  const msgs = [...d.feed(text), ...d.end().messages];
  const lines: TraceLine[] = [];
  let t = 0;
  for (const m of msgs) {
    if (m.event === 'error' && !m.data.trim().startsWith('{')) {
      lines.push({ t, kind: 'error', error: { type: 'api_error', message: m.data || 'upstream error' } });
    } else if (m.data === '[DONE]') lines.push({ t, kind: 'data', data: '[DONE]' });
    else if (m.data.length > 0) {
      try {
        const data: unknown = JSON.parse(m.data);
        // Dynamo's named events keep their name (the adapter reads `{event, data}`; src/wire/dynamo.ts).
        const named = fmt === 'dynamo' && m.event !== undefined && DYNAMO_NAMED_EVENTS.has(m.event);
        lines.push({ t, kind: 'data', data: named ? { event: m.event, data } : data });
      } catch {
        continue; // the stream reader warns about non-JSON data; a trace simply skips it
      }
    } else continue;
    t += pace;
  }
  return { format: fmt, attempts: [{ startMs: 0, lines }], source: 'sse' };
}

function fromPayloadLines(text: string, pace: number, format?: WireFormat): Trace {
  const fmt = format ?? detectFormat(text);
  if (!fmt) throw new TraceError('could not tell the wire format of this JSONL file; pass --format');
  const { payloads } = readPayloadLines(text);
  const lines: TraceLine[] = payloads.map((data, i) => ({ t: i * pace, kind: 'data', data }));
  return { format: fmt, attempts: [{ startMs: 0, lines }], source: 'jsonl' };
}

/** Serialise a trace back to the `.trace.jsonl` form. */
export function formatTrace(trace: Trace): string {
  const out: string[] = [JSON.stringify({ sluice: 'trace', format: trace.format, ...(trace.tools ? { tools: trace.tools } : {}) })];
  trace.attempts.forEach((a, i) => {
    if (i > 0) out.push(JSON.stringify({ t: a.startMs, attempt: i + 1 }));
    for (const l of a.lines) {
      if (l.kind === 'data') out.push(JSON.stringify({ t: l.t, data: l.data }));
      else if (l.kind === 'error')
        out.push(JSON.stringify({ t: l.t, error: { ...l.error, ...(l.retryable !== undefined ? { retryable: l.retryable } : {}) } }));
      else out.push(JSON.stringify({ t: l.t, end: true }));
    }
  });
  return out.join('\n') + '\n';
}

/**
 * The one-line `format_mismatch` message when a trace's payloads are another provider's shape than
 * its format (a header or `--format` naming the wrong one), else undefined. Looks at each
 * attempt's first payloads (src/wire/detect.ts).
 */
export function traceFormatMismatch(trace: Trace): string | undefined {
  for (const a of trace.attempts) {
    const m = findFormatMismatch(
      trace.format,
      a.lines.flatMap((l) => (l.kind === 'data' ? [l.data] : [])),
    );
    if (m !== undefined) return m;
  }
  return undefined;
}
