import type { Inspection } from './inspect';

/** The inspection flags shared by demo, replay and serve. */
export const INSPECT_FLAGS = {
  inspect: { type: 'boolean' },
  'inspect-log': { type: 'string' },
  'inspect-contents': { type: 'boolean' },
  'inspect-host': { type: 'string' },
} as const;

/**
 * Start inspection when `--inspect` or `--inspect-log` was given (undefined otherwise). The
 * inspector module (and its ESM-only dependency) is loaded only then.
 */
export async function inspectionFromFlags(
  flags: Record<string, string | boolean | undefined>,
  write?: (s: string) => void,
  /** A non-loopback `--inspect-host` is allowed (serve: `--api-key` or `--no-auth` given). */
  exposureAllowed = false,
): Promise<Inspection | undefined> {
  const logFile = typeof flags['inspect-log'] === 'string' ? flags['inspect-log'] : undefined;
  if (flags.inspect !== true && logFile === undefined) return undefined;
  const { createInspection } = await import('./inspect');
  return createInspection({
    inspect: flags.inspect === true,
    logFile,
    contents: flags['inspect-contents'] === true,
    ...(typeof flags['inspect-host'] === 'string' ? { host: flags['inspect-host'] } : {}),
    write,
    exposureAllowed,
  });
}
