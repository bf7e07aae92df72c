/** Service configuration, read from a JSON file or the environment. */
export interface Config {
  port: number;
  databaseUrl: string;
  maxOrdersPerMinute: number;
  features: Record<string, boolean>;
}

export interface ParseOptions {
  /** Reject unknown keys and missing required keys instead of filling in defaults. */
  strict?: boolean;
}

const DEFAULTS: Config = {
  port: 8080,
  databaseUrl: 'postgres://localhost/orders',
  maxOrdersPerMinute: 600,
  features: {},
};

export function parseConfig(raw: string, opts: ParseOptions = {}): Config {
  const value: unknown = JSON.parse(raw);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error('config: expected a JSON object');
  }
  const input = value as Partial<Config> & Record<string, unknown>;
  if (opts.strict) {
    for (const key of Object.keys(input)) {
      if (!(key in DEFAULTS)) throw new Error(`config: unknown key "${key}"`);
    }
    if (input.databaseUrl === undefined) throw new Error('config: databaseUrl is required');
  }
  return { ...DEFAULTS, ...input, features: { ...DEFAULTS.features, ...(input.features ?? {}) } };
}
