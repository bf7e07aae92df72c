/**
 * The CLI's argument parsing: Node's built-in `util.parseArgs` (stable on the Node ≥ 20 floor)
 * for the tokens — `--flag value`, `--flag=value`, boolean flags, positionals, `--` — with the
 * checks and one-line messages of sluice's CLI on top: an unknown flag, a value given to a boolean
 * flag, a missing value, a value outside `choices` are user errors (exit 2), never stack traces.
 */
import { parseArgs as nodeParseArgs } from 'node:util';

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** One line for any failure; the stack only with --debug. */
export function failureLine(err: unknown, debug: boolean): string {
  if (debug && err instanceof Error && err.stack) return err.stack;
  const msg = err instanceof Error ? err.message : String(err);
  return msg.split('\n')[0]!.trim() || 'unknown error';
}

export interface FlagSpec {
  /** 'string' takes a value; 'boolean' does not. */
  type: 'string' | 'boolean';
  /** Allowed values for a string flag. */
  choices?: readonly string[];
}

export interface Parsed {
  positionals: string[];
  flags: Record<string, string | boolean | undefined>;
}

export function parseArgs(argv: readonly string[], spec: Record<string, FlagSpec>): Parsed {
  const options = Object.fromEntries(Object.entries(spec).map(([name, s]) => [name, { type: s.type }]));
  // strict: false so the checks (and their messages) are ours; tokens say what was written.
  const { tokens } = nodeParseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const positionals: string[] = [];
  const flags: Record<string, string | boolean | undefined> = {};
  for (const t of tokens) {
    if (t.kind === 'positional') {
      positionals.push(t.value);
      continue;
    }
    if (t.kind === 'option-terminator') continue;
    const s = Object.hasOwn(spec, t.name) ? spec[t.name] : undefined;
    if (!s || t.rawName !== `--${t.name}`) throw new UsageError(`unknown option ${t.rawName}`);
    if (s.type === 'boolean') {
      if (t.inlineValue) throw new UsageError(`--${t.name} takes no value`);
      flags[t.name] = true;
      continue;
    }
    const value = t.value;
    if (value === undefined) throw new UsageError(`--${t.name} needs a value`);
    if (s.choices && !s.choices.includes(value)) throw new UsageError(`--${t.name} must be one of: ${s.choices.join(', ')} (got "${value}")`);
    flags[t.name] = value;
  }
  return { positionals, flags };
}

export function numberFlag(
  v: string | boolean | undefined,
  name: string,
  fallback?: number,
): number | undefined {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (typeof v !== 'string' || !Number.isFinite(n) || n < 0)
    throw new UsageError(`--${name} must be a non-negative number`);
  return n;
}
