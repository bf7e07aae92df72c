/**
 * A small, strict argument parser for the CLI: `--flag value`, `--flag=value`, boolean flags,
 * positionals. Unknown flags are a user error (exit 2 with a clear message), never a stack trace.
 */

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
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
  const positionals: string[] = [];
  const flags: Record<string, string | boolean | undefined> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!a.startsWith('--') || a === '--') {
      positionals.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq >= 0 ? a.slice(2, eq) : a.slice(2);
    const s = spec[name];
    if (!s) throw new UsageError(`unknown option --${name}`);
    if (s.type === 'boolean') {
      if (eq >= 0) throw new UsageError(`--${name} takes no value`);
      flags[name] = true;
      continue;
    }
    let value: string | undefined = eq >= 0 ? a.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    if (s.choices && !s.choices.includes(value))
      throw new UsageError(`--${name} must be one of: ${s.choices.join(', ')} (got "${value}")`);
    flags[name] = value;
    value = undefined;
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
