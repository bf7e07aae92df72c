import * as fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { UsageError } from './args';

/**
 * The one way the CLI reads an input file (traces, recordings, tool specs). Hostile inputs get a
 * one-line error instead of a hang, a stack trace or unbounded memory:
 *
 * - regular files only: a directory, a FIFO (which would block forever without a writer), a
 *   device (`/dev/zero` never ends) or a socket is refused before anything is read. The file is
 *   opened non-blocking and checked with `fstat` on the open descriptor (no check-then-open race);
 * - a size limit (`SLUICE_MAX_INPUT_BYTES`, default 256 MiB): a larger file is refused from its
 *   size, and the read itself stops at the limit too (a file that grows, or one whose reported
 *   size is 0 such as /proc files, cannot push past it);
 * - streaming reads in 1 MiB chunks through one UTF-8 decoder: the bytes are never held whole
 *   next to the decoded text.
 *
 * Exit codes: naming a path that does not exist or is not a regular file is a usage error (exit 2);
 * a file over the limit or unreadable is a run failure (`CliError`, exit 1). Both are one line.
 */

/** A run failure the CLI reports as one line with exit status 1 (usage errors are `UsageError`, exit 2). */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

export const DEFAULT_MAX_INPUT_BYTES = 256 * 1024 * 1024;
const CHUNK = 1024 * 1024;

/** The input size limit: `SLUICE_MAX_INPUT_BYTES` (bytes; suffixes k, m, g accepted) or the default. */
export function maxInputBytes(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SLUICE_MAX_INPUT_BYTES;
  if (raw === undefined || raw === '') return DEFAULT_MAX_INPUT_BYTES;
  const m = /^\s*(\d+)\s*([kmg]?)i?b?\s*$/i.exec(raw);
  if (!m) throw new CliError(`SLUICE_MAX_INPUT_BYTES must be a number of bytes, e.g. 268435456 or 256m (got "${raw}")`);
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2]!.toLowerCase() as '' | 'k' | 'm' | 'g'];
  return Number(m[1]) * unit;
}

function kindOf(st: fs.Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

function openError(file: string, err: unknown): CliError | UsageError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return new UsageError(`no such file: ${file}`);
    case 'EACCES':
    case 'EPERM':
      return new CliError(`${file}: permission denied`);
    case 'EISDIR':
      return new UsageError(`${file} is a directory, expected a regular file`);
    case 'ELOOP':
      return new CliError(`${file}: too many levels of symbolic links`);
    case 'ENAMETOOLONG':
      return new CliError(`${file}: file name too long`);
    default:
      return new CliError(`${file}: cannot read (${code ?? (err instanceof Error ? err.message : String(err))})`);
  }
}

/** Refuse what is not a regular file, or is over the limit (checked on an open descriptor). */
function checkInput(file: string, st: fs.Stats, maxBytes: number): void {
  if (!st.isFile()) throw new UsageError(`${file} is ${kindOf(st)}, expected a regular file`);
  if (st.size > maxBytes) {
    throw new CliError(`${file} is ${st.size} bytes, over the input limit of ${maxBytes} bytes (SLUICE_MAX_INPUT_BYTES)`);
  }
}

/** Open `file` for reading and check it under the rules above (the caller closes the descriptor). */
function openInput(file: string, maxBytes: number): number {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO with no writer must not block; fstat then refuses it.
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (err) {
    throw openError(file, err);
  }
  try {
    checkInput(file, fs.fstatSync(fd), maxBytes);
    return fd;
  } catch (err) {
    fs.closeSync(fd);
    throw err instanceof UsageError || err instanceof CliError ? err : openError(file, err);
  }
}

/**
 * Check an input that another reader opens (e.g. a journal, read by its store): a regular file
 * within the size limit, or a one-line `UsageError` / `CliError`. The store checks again on its own
 * descriptor, so a file swapped in between is refused too.
 */
export function checkInputFile(file: string, maxBytes = maxInputBytes()): void {
  fs.closeSync(openInput(file, maxBytes));
}

/** Read a whole input file as UTF-8 text, under the rules above. Throws `UsageError` or `CliError` (one line). */
export function readInputText(file: string, maxBytes = maxInputBytes()): string {
  const fd = openInput(file, maxBytes);
  try {
    const decoder = new StringDecoder('utf8');
    const buf = Buffer.allocUnsafe(Math.min(CHUNK, maxBytes + 1));
    const parts: string[] = [];
    let total = 0;
    for (;;) {
      let n: number;
      try {
        n = fs.readSync(fd, buf, 0, buf.length, null);
      } catch (err) {
        throw openError(file, err);
      }
      if (n === 0) break;
      total += n;
      if (total > maxBytes) {
        throw new CliError(`${file} grew past the input limit of ${maxBytes} bytes while being read (SLUICE_MAX_INPUT_BYTES)`);
      }
      parts.push(decoder.write(buf.subarray(0, n)));
    }
    parts.push(decoder.end());
    return parts.join('');
  } finally {
    fs.closeSync(fd);
  }
}

/** `file` must be a path that exists: a one-line error otherwise (for commands that accept directories). */
export function statInput(file: string): fs.Stats {
  // Throws UsageError (missing) or CliError (unreadable).
  try {
    return fs.statSync(file);
  } catch (err) {
    throw openError(file, err);
  }
}
