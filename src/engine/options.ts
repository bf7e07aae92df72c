/**
 * Misuse fails loudly, before the stream is opened (SPEC §12, docs/embedding.md "Failure in one
 * way"): every `runTurn` option is checked here, in one place. One line, `sluice: …`, naming the
 * option or field, as a TypeError (wrong kind of value, unknown name) or a RangeError (a number
 * out of range). An unknown name lists the known ones and suggests the nearest; a wrong type is
 * named as a type ("got the string '4'").
 */
import type { ControllerEvents } from './controller';
import type { RunTurnOptions, TurnPolicy } from './runTurnOptions';
import type { TelemetryOptions } from '../telemetry/turn';
import type { ToolRegistry } from '../execute/tools';
import { neutralHistoryProblem } from '../history/neutral';
import { createAdapter, WIRE_FORMATS } from '../wire';
import type { WireFormat } from '../wire/events';
import { RETRY_JITTERS } from './retry';

/** Every top-level `runTurn` option (the compiler keeps this list equal to `RunTurnOptions`). */
const RUN_TURN_KEYS = Object.keys({
  format: true,
  stream: true,
  tools: true,
  policy: true,
  signal: true,
  approve: true,
  on: true,
  inspect: true,
  clock: true,
  classify: true,
  history: true,
  knownCallIds: true,
  journal: true,
  limits: true,
  telemetry: true,
} satisfies Record<keyof RunTurnOptions, true>);

export const POLICY_KEYS = Object.keys({
  earlyStart: true,
  maxConcurrent: true,
  onAbort: true,
  maxAttempts: true,
  retryBaseMs: true,
  retryMaxDelayMs: true,
  retryJitter: true,
  idleTimeoutMs: true,
  completion: true,
  structuredOutputTool: true,
  singleTool: true,
  toolTimeoutMs: true,
  reuseResults: true,
} satisfies Record<keyof TurnPolicy, true>);

/** The event names `on` accepts (ControllerEvents). */
export const EVENT_NAMES = Object.keys({
  output: true,
  'call.ready': true,
  'call.released': true,
  'call.suppressed': true,
  'approval.request': true,
  'tool.start': true,
  'tool.result': true,
  'call.reused': true,
  'attempt.retry': true,
  'attempt.begin': true,
  'turn.done': true,
  warning: true,
  fault: true,
  trace: true,
} satisfies Record<keyof ControllerEvents, true>);

const TELEMETRY_KEYS = Object.keys({
  enabled: true,
  recordContents: true,
  model: true,
  tracerProvider: true,
  meterProvider: true,
} satisfies Record<keyof TelemetryOptions, true>);

/** Edit distance (insertions, deletions, substitutions; a swap of neighbours counts 1). */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The known name nearest to `name` when it is near enough to be a typo (or a prefix/extension of one). */
export function nearest(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestD = Infinity;
  for (const k of known) {
    const kl = k.toLowerCase();
    const dist = kl === lower ? 0 : lower.startsWith(kl) || kl.startsWith(lower) ? Math.abs(kl.length - lower.length) / 4 : distance(lower, kl);
    if (dist < bestD) {
      bestD = dist;
      best = k;
    }
  }
  return best !== undefined && bestD <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}

function unknownKey(what: string, key: string, known: readonly string[]): TypeError {
  const near = nearest(key, known);
  return new TypeError(`sluice: unknown ${what} "${key}"${near ? ` (did you mean ${near}?)` : ''} (known: ${known.join(', ')})`);
}

/** A value named as its type: "the string '4'", "the number -1", "null", "an array", "an object", "a function". */
export function describeValue(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  switch (typeof v) {
    case 'string':
      return `the string '${v.length > 40 ? `${v.slice(0, 40)}…` : v}'`;
    case 'number':
    case 'bigint':
      return `the ${typeof v} ${String(v)}`;
    case 'boolean':
      return `the boolean ${String(v)}`;
    case 'function':
      return 'a function';
    case 'symbol':
      return 'a symbol';
    default:
      return 'an object';
  }
}

function oneOf(what: string, v: unknown, allowed: readonly string[]): void {
  if (v !== undefined && !allowed.includes(v as string)) {
    const near = typeof v === 'string' ? nearest(v, allowed) : undefined;
    throw new TypeError(`sluice: ${what} must be one of ${allowed.map((a) => `'${a}'`).join(', ')} (got ${describeValue(v)})${near ? ` (did you mean '${near}'?)` : ''}`);
  }
}

function numberAtLeast(what: string, v: unknown, min: number, opts: { integer?: boolean; infinite?: boolean } = {}): void {
  if (v === undefined) return;
  const ok =
    typeof v === 'number' && v >= min && (v === Infinity ? opts.infinite === true : Number.isFinite(v) && (!opts.integer || Number.isInteger(v)));
  if (!ok) {
    const kind = opts.integer ? `an integer ≥ ${min}` : min === 0 ? 'a non-negative number of ms' : `a number ≥ ${min}`;
    const err = typeof v === 'number' ? RangeError : TypeError;
    // A number out of range is shown as itself; a value of another type is named with its type.
    throw new err(`sluice: ${what} must be ${kind} (got ${typeof v === 'number' ? String(v) : describeValue(v)})`);
  }
}

function isFn(v: unknown): boolean {
  return typeof v === 'function';
}

function plainObject(what: string, v: unknown, shape: string): v is Record<string, unknown> {
  if (v === undefined) return false;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new TypeError(`sluice: ${what} must be an object ${shape} (got ${describeValue(v)})`);
  return true;
}

function checkFormat(format: unknown): void {
  const expected = [...WIRE_FORMATS, 'ai-sdk', 'text:<family>'];
  if (typeof format !== 'string') {
    throw new TypeError(`sluice: format is required (one of ${expected.join(', ')})${format === undefined ? '' : ` (got ${describeValue(format)})`}`);
  }
  try {
    createAdapter(format as WireFormat);
  } catch {
    if (format.startsWith('text:')) {
      throw new TypeError(
        `sluice: format "${format}": no parser registered for text family "${format.slice(5)}" (registerTextParsers() from 'sluice/parsers' registers the built-in ones)`,
      );
    }
    const near = nearest(format, [...WIRE_FORMATS, 'ai-sdk']);
    throw new TypeError(`sluice: unknown format "${format}" (expected one of ${expected.join(', ')})${near ? ` (did you mean ${near}?)` : ''}`);
  }
}

function checkTools(tools: unknown): void {
  if (!Array.isArray(tools)) {
    if (typeof tools === 'object' && tools !== null && isFn((tools as ToolRegistry).get)) {
      const list = isFn((tools as ToolRegistry).list) ? (tools as ToolRegistry).list() : [];
      list.forEach((t, i) => checkTool(t, `tools.list()[${i}]`));
      return;
    }
    throw new TypeError(`sluice: tools must be an array of tools or a tool registry ([] for none) (got ${describeValue(tools)})`);
  }
  tools.forEach((t, i) => checkTool(t, `tools[${i}]`));
}

function checkTool(t: unknown, at: string): void {
  if (typeof t !== 'object' || t === null) throw new TypeError(`sluice: ${at} must be a tool (defineTool(…)) (got ${describeValue(t)})`);
  const tool = t as { name?: unknown; run?: unknown };
  if (typeof tool.name !== 'string' || tool.name === '') throw new TypeError(`sluice: ${at}.name must be a tool name (got ${describeValue(tool.name)})`);
  if (!isFn(tool.run)) {
    throw new TypeError(`sluice: ${at} ("${tool.name}") has no run function (got ${describeValue(tool.run)}): give defineTool({ …, run: async (input, ctx) => result })`);
  }
}

function checkPolicy(p: unknown): void {
  if (!plainObject('policy', p, '(TurnPolicy)')) return;
  for (const key of Object.keys(p)) if (!POLICY_KEYS.includes(key)) throw unknownKey('policy option', key, POLICY_KEYS);
  const policy = p as TurnPolicy;
  oneOf('policy.earlyStart', policy.earlyStart, ['safe', 'none', 'all', 'shadow']);
  oneOf('policy.onAbort', policy.onAbort, ['commit', 'drop']);
  oneOf('policy.completion', policy.completion, ['inferred', 'evidence-only']);
  oneOf('policy.reuseResults', policy.reuseResults, ['safe', 'none']);
  oneOf('policy.retryJitter', policy.retryJitter, RETRY_JITTERS);
  numberAtLeast('policy.maxConcurrent', policy.maxConcurrent, 1, { integer: true, infinite: true });
  numberAtLeast('policy.maxAttempts', policy.maxAttempts, 1, { integer: true });
  numberAtLeast('policy.retryBaseMs', policy.retryBaseMs, 0);
  numberAtLeast('policy.retryMaxDelayMs', policy.retryMaxDelayMs, 0, { infinite: true });
  numberAtLeast('policy.idleTimeoutMs', policy.idleTimeoutMs, 0);
  numberAtLeast('policy.toolTimeoutMs', policy.toolTimeoutMs, 0, { infinite: true });
  if (policy.singleTool !== undefined && typeof policy.singleTool !== 'boolean') {
    throw new TypeError(`sluice: policy.singleTool must be a boolean (got ${describeValue(policy.singleTool)})`);
  }
  if (policy.structuredOutputTool !== undefined && typeof policy.structuredOutputTool !== 'string') {
    throw new TypeError(`sluice: policy.structuredOutputTool must be a tool name (got ${describeValue(policy.structuredOutputTool)})`);
  }
}

function checkOn(on: unknown): void {
  if (!plainObject('on', on, "of event handlers ({ 'tool.start': (e) => … })")) return;
  for (const [name, fn] of Object.entries(on)) {
    if (!EVENT_NAMES.includes(name)) throw unknownKey('event name in on', name, EVENT_NAMES);
    if (!isFn(fn)) throw new TypeError(`sluice: on['${name}'] must be a function (got ${describeValue(fn)})`);
  }
}

function checkTelemetry(t: unknown): void {
  if (!plainObject('telemetry', t, '({ recordContents?, model?, enabled? })')) return;
  for (const key of Object.keys(t)) if (!TELEMETRY_KEYS.includes(key)) throw unknownKey('telemetry option', key, TELEMETRY_KEYS);
  for (const key of ['enabled', 'recordContents'] as const) {
    if (t[key] !== undefined && typeof t[key] !== 'boolean') throw new TypeError(`sluice: telemetry.${key} must be a boolean (got ${describeValue(t[key])})`);
  }
  if (t.model !== undefined && typeof t.model !== 'string') throw new TypeError(`sluice: telemetry.model must be a string (got ${describeValue(t.model)})`);
}

function checkFunction(what: string, v: unknown, shape: string): void {
  if (v !== undefined && !isFn(v)) throw new TypeError(`sluice: ${what} must be a function ${shape} (got ${describeValue(v)})`);
}

/**
 * The options `resumeTurn` shares with `runTurn` (`policy`, `on`, `approve`), checked the same way
 * before the journal is touched.
 */
export function checkSharedTurnOptions(opts: { policy?: unknown; on?: unknown; approve?: unknown }): void {
  checkPolicy(opts.policy);
  checkOn(opts.on);
  checkFunction('approve', opts.approve, '(call) => boolean | Promise<boolean>');
}

/**
 * Every `runTurn` option, before anything runs: unknown names (top level, `policy`, `on`,
 * `telemetry`) with the nearest known one, wrong types named as types, tools without `run`,
 * history that is not the neutral shape (the message, the field and the converter to use).
 */
export function checkRunTurnOptions(opts: RunTurnOptions): void {
  if (typeof opts !== 'object' || opts === null) throw new TypeError(`sluice: runTurn needs an options object (got ${describeValue(opts)})`);
  for (const key of Object.keys(opts)) if (!RUN_TURN_KEYS.includes(key)) throw unknownKey('runTurn option', key, RUN_TURN_KEYS);
  checkFormat(opts.format);
  if (opts.stream === undefined || opts.stream === null) throw new TypeError('sluice: stream is required (a stream source, or a function of the attempt that returns one)');
  checkTools(opts.tools);
  checkPolicy(opts.policy);
  checkOn(opts.on);
  checkTelemetry(opts.telemetry);
  checkFunction('approve', opts.approve, '(call) => boolean | Promise<boolean>');
  checkFunction('classify', opts.classify, '(name, input, defaults) => Classification');
  const signal: unknown = opts.signal;
  if (signal !== undefined && !(typeof signal === 'object' && signal !== null && 'aborted' in signal && isFn((signal as AbortSignal).addEventListener))) {
    throw new TypeError(`sluice: signal must be an AbortSignal (got ${describeValue(signal)})`);
  }
  plainObject('limits', opts.limits, '(TurnLimits)');
  if (opts.history !== undefined) {
    const problem = neutralHistoryProblem(opts.history);
    if (problem) throw new TypeError(`sluice: ${problem}`);
  }
  const ids: unknown = opts.knownCallIds;
  if (ids !== undefined && (typeof ids !== 'object' || ids === null || !isFn((ids as Iterable<string>)[Symbol.iterator]))) {
    throw new TypeError(`sluice: knownCallIds must be an iterable of call ids (got ${describeValue(ids)})`);
  }
}
