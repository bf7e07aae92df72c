/**
 * The one directory walk of the CLI's readers (`sluice analyze`, `sluice report`): files under the
 * given paths, each read once, in a walk that always ends.
 *
 * - Symbolic links are followed, but every directory is entered once, known by its device and
 *   inode: a link back to an ancestor (`loop -> .`) or a second link to a directory already
 *   walked is skipped. The skips are reported as ONE warning per walk (how many, and the first).
 * - Every file is taken once, by device and inode too: a file reached through two links (or named
 *   twice) is read once.
 * - A directory is walked with an explicit stack (no recursion), entries in sorted order; names
 *   starting with `.` are skipped (and whatever `skip` says); an entry that cannot be stat'ed (a
 *   dangling link, ELOOP, a file that vanished) is not an input; only regular files are taken
 *   (a FIFO or device in a directory is never opened).
 *
 * Errors are `WalkError`s with a code the caller maps to its own one-line message.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export class WalkError extends Error {
  constructor(
    message: string,
    /** missing: a named path does not exist; unreadable: a named directory cannot be listed; not-file: a named path is neither a regular file nor a directory. */
    readonly code: 'missing' | 'unreadable' | 'not-file',
    readonly path: string,
  ) {
    super(message);
    this.name = 'WalkError';
  }
}

export interface WalkOptions {
  /** Take this file found in a directory? (Named files are always taken.) Default: every regular file. */
  accept?: (name: string, file: string) => boolean;
  /** Do not look into this entry of a directory (names starting with `.` are always skipped). */
  skip?: (name: string) => boolean;
}

const idOf = (st: fs.Stats): string => `${st.dev}:${st.ino}`;

export class Walker {
  /** Every file taken, in walk order. */
  readonly files: string[] = [];
  private readonly dirs = new Set<string>();
  private readonly seenFiles = new Set<string>();
  private skippedLinks = 0;
  private firstSkipped: string | undefined;

  constructor(private readonly opts: WalkOptions = {}) {}

  /** Walk one named path; returns how many files it added. */
  add(p: string): number {
    const before = this.files.length;
    let st: fs.Stats;
    try {
      st = fs.statSync(p);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') throw new WalkError(`${p}: no such file or directory`, 'missing', p);
      throw new WalkError(`${p}: cannot be read (${code ?? 'error'})`, 'unreadable', p);
    }
    if (st.isDirectory()) this.walkDir(p, st);
    else if (st.isFile()) this.take(p, st);
    else throw new WalkError(`${p}: not a regular file or directory`, 'not-file', p);
    return this.files.length - before;
  }

  /** `p` is a directory this walk has entered already (named twice, or reached through a link). */
  walked(p: string): boolean {
    try {
      const st = fs.statSync(p);
      return st.isDirectory() && this.dirs.has(idOf(st));
    } catch {
      return false;
    }
  }

  /** The one warning of this walk, when directory links were skipped. */
  warning(): string | undefined {
    if (this.skippedLinks === 0) return undefined;
    const n = this.skippedLinks;
    return `skipped ${n} link${n === 1 ? '' : 's'} to a directory already walked (a symlink loop or a second link), first ${this.firstSkipped}`;
  }

  private take(p: string, st: fs.Stats): void {
    const id = idOf(st);
    if (this.seenFiles.has(id)) return;
    this.seenFiles.add(id);
    this.files.push(p);
  }

  /** Enter a directory once (by device and inode); false when it was walked already. */
  private enter(dir: string, st: fs.Stats): boolean {
    const id = idOf(st);
    if (!this.dirs.has(id)) return this.dirs.add(id), true;
    if (this.skippedLinks++ === 0) this.firstSkipped = dir;
    return false;
  }

  private walkDir(root: string, rootSt: fs.Stats): void {
    if (!this.enter(root, rootSt)) return;
    const list = (dir: string): string[] | undefined => {
      try {
        return fs.readdirSync(dir).sort();
      } catch (err) {
        if (dir === root) throw new WalkError(`${dir}: cannot list the directory (${(err as NodeJS.ErrnoException).code ?? 'error'})`, 'unreadable', dir);
        return undefined; // an unreadable subdirectory holds no inputs
      }
    };
    // Depth first in sorted order, as a recursion would go, with an explicit stack of open directories.
    const stack: Array<{ dir: string; names: string[]; i: number }> = [{ dir: root, names: list(root) ?? [], i: 0 }];
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (top.i >= top.names.length) {
        stack.pop();
        continue;
      }
      const name = top.names[top.i++]!;
      if (name.startsWith('.') || this.opts.skip?.(name) === true) continue;
      const q = path.join(top.dir, name);
      let st: fs.Stats;
      try {
        st = fs.statSync(q);
      } catch {
        continue; // a dangling link, a loop the kernel refused (ELOOP), or a file that vanished
      }
      if (st.isDirectory()) {
        if (this.enter(q, st)) stack.push({ dir: q, names: list(q) ?? [], i: 0 });
      } else if (st.isFile() && (this.opts.accept?.(name, q) ?? true)) this.take(q, st);
    }
  }
}
