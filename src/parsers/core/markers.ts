/**
 * A fixed set of literal markers searched in a buffer. `find` gives the earliest occurrence (the
 * longest marker on a tie); `holdStart` gives where the minimal suffix that could still grow into
 * a marker begins. Both look at no more than the new text plus `maxLen - 1` characters, so holding
 * back is O(marker length), never O(buffer).
 */
export interface MarkerHit {
  at: number;
  marker: string;
}

export class MarkerSet {
  readonly markers: readonly string[];
  readonly maxLen: number;
  private readonly first: Set<number>;

  constructor(markers: readonly string[]) {
    const uniq = [...new Set(markers.filter((m) => m.length > 0))];
    // Longest first: on equal positions the longest marker wins.
    uniq.sort((a, b) => b.length - a.length);
    this.markers = uniq;
    this.maxLen = uniq.reduce((n, m) => Math.max(n, m.length), 0);
    this.first = new Set(uniq.map((m) => m.charCodeAt(0)));
  }

  has(m: string): boolean {
    return this.markers.includes(m);
  }

  /** Earliest marker at or after `from`, or null. */
  find(buf: string, from: number): MarkerHit | null {
    let best = -1;
    let bestM = '';
    for (const m of this.markers) {
      const limit = best < 0 ? buf.length : best + 1;
      if (from + m.length > buf.length) continue;
      const at = buf.indexOf(m, from);
      if (at >= 0 && at < limit && (best < 0 || at < best)) {
        best = at;
        bestM = m;
      }
    }
    return best < 0 ? null : { at: best, marker: bestM };
  }

  /**
   * Start of the shortest-possible held suffix: the earliest position p >= from such that
   * buf.slice(p) is a proper prefix of some marker; buf.length when nothing needs holding.
   */
  holdStart(buf: string, from: number): number {
    const len = buf.length;
    const start = Math.max(from, len - this.maxLen + 1);
    for (let s = start; s < len; s++) {
      if (!this.first.has(buf.charCodeAt(s))) continue;
      const tailLen = len - s;
      for (const m of this.markers) {
        if (m.length > tailLen && m.startsWith(buf.slice(s))) return s;
      }
    }
    return len;
  }

  /** 'yes' if buf at pos starts with m, 'maybe' if buf ends inside a prefix of m, else 'no'. */
  static startsAt(buf: string, pos: number, m: string): 'yes' | 'maybe' | 'no' {
    const avail = buf.length - pos;
    if (avail >= m.length) return buf.startsWith(m, pos) ? 'yes' : 'no';
    return m.startsWith(buf.slice(pos)) ? 'maybe' : 'no';
  }
}

export function isWs(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/** Strip whitespace (space, tab, CR, LF) at both ends. */
export function trimWs(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && isWs(s.charCodeAt(a))) a++;
  while (b > a && isWs(s.charCodeAt(b - 1))) b--;
  return s.slice(a, b);
}

/**
 * Drops the whitespace before the first non-whitespace character of a piecewise stream (the
 * start of a call's argument JSON).
 */
export class LeadingWs {
  private leading = true;

  reset(): void {
    this.leading = true;
  }

  /** `s` without leading whitespace of the stream; '' while only whitespace has arrived. */
  strip(s: string): string {
    if (!this.leading) return s;
    let i = 0;
    while (i < s.length && isWs(s.charCodeAt(i))) i++;
    if (i === s.length) return '';
    this.leading = false;
    return s.slice(i);
  }
}
