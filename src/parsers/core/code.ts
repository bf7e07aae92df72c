/**
 * Markdown code tracker for text mode: tells whether the next character is inside a fenced code
 * block (``` or ~~~, three or more, at a line start with at most three spaces of indent) or an
 * inline code span (a backtick run, closed by a run of the same length on the same line).
 * Families with plain-text markers treat markup inside code as literal text.
 *
 * Simplifications (documented in docs/parsers.md): a closing fence is any run of the fence
 * character at least as long as the opening one at a line start; inline spans end at a newline.
 */
export class CodeTracker {
  private lineStart = true;
  private indent = 0;
  private runCh = 0;
  private runLen = 0;
  private runAtLineStart = false;
  private fenceCh = 0;
  private fenceLen = 0;
  private inline = 0;

  feed(s: string): void {
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (this.runLen > 0) {
        if (c === this.runCh) {
          this.runLen++;
          continue;
        }
        this.finishRun();
      }
      if (c === 96 /* ` */ || c === 126 /* ~ */) {
        this.runCh = c;
        this.runLen = 1;
        this.runAtLineStart = this.lineStart && this.indent <= 3;
        this.lineStart = false;
        continue;
      }
      if (c === 10) {
        this.lineStart = true;
        this.indent = 0;
        this.inline = 0;
        continue;
      }
      if (this.lineStart && (c === 32 || c === 9)) {
        this.indent += c === 9 ? 4 : 1;
        continue;
      }
      this.lineStart = false;
    }
  }

  /** Whether a marker starting at the next character would be inside code. */
  inCode(): boolean {
    if (this.runLen > 0) this.finishRun();
    return this.fenceCh !== 0 || this.inline !== 0;
  }

  /** A block of markup (a call) just ended: the next text starts a fresh line outside inline code. */
  blockBoundary(): void {
    if (this.runLen > 0) this.finishRun();
    this.lineStart = true;
    this.indent = 0;
    this.inline = 0;
  }

  private finishRun(): void {
    const ch = this.runCh;
    const n = this.runLen;
    this.runCh = 0;
    this.runLen = 0;
    if (this.runAtLineStart && n >= 3 && this.inline === 0) {
      if (this.fenceCh === 0) {
        if (ch === 96 || ch === 126) {
          this.fenceCh = ch;
          this.fenceLen = n;
        }
      } else if (ch === this.fenceCh && n >= this.fenceLen) {
        this.fenceCh = 0;
        this.fenceLen = 0;
      }
      return;
    }
    if (ch === 96 && this.fenceCh === 0) {
      if (this.inline === 0) this.inline = n;
      else if (this.inline === n) this.inline = 0;
    }
  }
}
