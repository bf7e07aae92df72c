import { readFileSync } from 'node:fs';

/** Read a text file, or return undefined when it does not exist. */
export function readOptional(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Milliseconds since `start`, rounded for logs. */
export function elapsed(start: number): number {
  return Math.round(performance.now() - start);
}

export function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, n));
}
