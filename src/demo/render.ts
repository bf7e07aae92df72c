import { SAFE_KINDS } from '../execute/safety';
import type { CallPhase } from '../../machines/toolCall.machine';
import type { LiveCall, LiveChange, LiveTurn } from './run';

/**
 * Terminal timelines for the demo: a Gantt row for the model stream and one per call
 * (░ arguments streaming, · ready and waiting to start, █ tool running, ┊ end of the stream),
 * the call actor's current state and sizes on the right. `LiveView` redraws in place on a TTY;
 * `PlainLog` prints one line per change when there is no TTY. Never shows argument contents.
 */

export interface ChartOptions {
  /** Milliseconds covered by the bar area (the same for both runs, so they compare). */
  scaleMs: number;
  /** Columns of the bar area. */
  width: number;
  color: boolean;
  /** Draw only up to this time (live view); default: everything. */
  nowMs?: number;
}


const ansi = (color: boolean, code: string, s: string): string => (color && s.length > 0 ? `\x1b[${code}m${s}\x1b[0m` : s);
export const style = {
  dim: (c: boolean, s: string) => ansi(c, '2', s),
  bold: (c: boolean, s: string) => ansi(c, '1', s),
  cyan: (c: boolean, s: string) => ansi(c, '36', s),
  green: (c: boolean, s: string) => ansi(c, '32', s),
  yellow: (c: boolean, s: string) => ansi(c, '33', s),
  blue: (c: boolean, s: string) => ansi(c, '34', s),
  magenta: (c: boolean, s: string) => ansi(c, '35', s),
  red: (c: boolean, s: string) => ansi(c, '31', s),
};

export function fmtS(ms: number | undefined): string {
  return ms === undefined ? '—' : `${(ms / 1000).toFixed(2)} s`;
}

export function fmtBytes(n: number): string {
  return n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KB`;
}

/** A tick step (ms) that leaves at least 7 columns between labels. */
function tickStep(scaleMs: number, width: number): number {
  for (const s of [100, 200, 250, 500, 1000, 2000, 5000, 10_000, 30_000, 60_000]) if ((s / scaleMs) * width >= 7) return s;
  return 120_000;
}

export const LABEL_WIDTH = 16;

function axis(o: ChartOptions): string {
  const cells = Array<string>(o.width).fill(' ');
  const step = tickStep(o.scaleMs, o.width);
  for (let t = 0; t <= o.scaleMs; t += step) {
    const col = Math.round((t / o.scaleMs) * o.width);
    const label = step >= 1000 || t % 1000 === 0 ? `${t / 1000}s` : `${(t / 1000).toFixed(step % 100 === 0 ? 1 : 2)}s`;
    if (col + label.length > o.width) break;
    for (let k = 0; k < label.length; k++) cells[col + k] = label[k]!;
  }
  return ' '.repeat(LABEL_WIDTH + 2) + cells.join('');
}

type Cell = 'args' | 'wait' | 'run' | 'stream' | 'end' | 'none';

function callCell(c: LiveCall, t: number, now: number): Cell {
  if (t < c.openMs || t > now) return 'none';
  const complete = c.completeMs ?? Infinity;
  const started = c.startedMs ?? Infinity;
  const result = c.resultMs ?? Infinity;
  if (t < complete) return 'args';
  if (t < started && t < result) return c.phase === 'discarded' ? 'none' : 'wait';
  if (t < result) return 'run';
  return 'none';
}

function paint(cells: Cell[], o: ChartOptions, safe: boolean): string {
  let out = '';
  let i = 0;
  while (i < cells.length) {
    let j = i;
    while (j < cells.length && cells[j] === cells[i]) j++;
    const n = j - i;
    switch (cells[i]) {
      case 'args':
        out += style.cyan(o.color, '░'.repeat(n));
        break;
      case 'wait':
        out += style.dim(o.color, '·'.repeat(n));
        break;
      case 'run':
        out += safe ? style.green(o.color, '█'.repeat(n)) : style.yellow(o.color, '█'.repeat(n));
        break;
      case 'stream':
        out += style.blue(o.color, '━'.repeat(n));
        break;
      case 'end':
        out += style.dim(o.color, '┊'.repeat(n));
        break;
      default:
        out += ' '.repeat(n);
    }
    i = j;
  }
  return out;
}

function describe(c: LiveCall): string {
  switch (c.phase) {
    case 'opened':
    case 'streaming':
      return `streaming  args ${fmtBytes(c.argsBytes)}`;
    case 'running':
      return 'running';
    case 'resulted':
      return `resulted   ${c.ok === false ? 'error' : 'ok'}${c.resultChars !== undefined ? ` ${fmtBytes(c.resultChars)}` : ''}`;
    case 'released':
      return SAFE_KINDS.has(c.kind ?? '') ? 'released   waiting' : 'released   waits for stream end';
    default:
      return c.phase;
  }
}

/** The chart lines for one turn (axis, stream row, one row per call). */
export function renderChart(turn: LiveTurn, o: ChartOptions): string[] {
  const now = o.nowMs ?? Infinity;
  const colMs = o.scaleMs / o.width;
  const mid = (j: number): number => (j + 0.5) * colMs;
  const endCol = turn.streamEndMs === undefined ? -1 : Math.min(o.width - 1, Math.floor(turn.streamEndMs / colMs));
  const lines: string[] = [axis(o)];

  const streamCells: Cell[] = [];
  for (let j = 0; j < o.width; j++) {
    const t = mid(j);
    const end = turn.streamEndMs ?? Infinity;
    streamCells.push(t <= now && t < end ? 'stream' : j === endCol ? 'end' : 'none');
  }
  const streamState =
    turn.streamEndMs !== undefined
      ? `ended ${fmtS(turn.streamEndMs)}${turn.finish ? ` (${turn.finish})` : ''}`
      : turn.error
        ? 'error'
        : `streaming  text ${turn.textChars} chars`;
  lines.push(`  ${style.bold(o.color, 'model stream'.padEnd(LABEL_WIDTH))}${paint(streamCells, o, true)}  ${streamState}`);

  for (const c of turn.calls) {
    if (!c) continue;
    const cells: Cell[] = [];
    for (let j = 0; j < o.width; j++) {
      const cell = callCell(c, mid(j), now);
      cells.push(cell === 'none' && j === endCol ? 'end' : cell);
    }
    const label = `#${c.index} ${c.name ?? '?'}`.slice(0, LABEL_WIDTH).padEnd(LABEL_WIDTH);
    const safe = SAFE_KINDS.has(c.kind ?? '');
    lines.push(`  ${label}${paint(cells, o, safe)}  ${describe(c)}`);
  }
  return lines;
}

export function legend(color: boolean): string {
  return `  ${style.cyan(color, '░')} arguments streaming   ${style.dim(color, '·')} ready, waiting to start   ${style.green(color, '█')} read-only tool running   ${style.yellow(color, '█')} edit running   ${style.dim(color, '┊')} stream end`;
}

const CSI = new RegExp(`^${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`);

/** Cut `s` to `cols` visible characters, keeping ANSI colour sequences intact. */
export function fit(s: string, cols: number): string {
  let visible = 0;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) === 27) {
      const m = CSI.exec(s.slice(i));
      if (m) {
        out += m[0];
        i += m[0].length - 1;
        continue;
      }
    }
    if (visible >= cols) continue;
    out += s[i];
    visible++;
  }
  return out;
}

/** Redraws the chart in place (TTY). */
export class LiveView {
  private timer?: NodeJS.Timeout;
  private drawn = 0;
  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly turn: () => LiveTurn | undefined,
    private readonly header: string[],
    private readonly o: Omit<ChartOptions, 'nowMs'>,
  ) {}

  private readonly onSigint = (): void => {
    this.out.write('\x1b[?25h\n');
    process.exit(130);
  };

  start(): void {
    this.out.write('\x1b[?25l'); // hide the cursor while redrawing
    process.once('SIGINT', this.onSigint); // …and give it back on Ctrl+C
    this.draw();
    this.timer = setInterval(() => this.draw(), 50);
  }

  private frame(final: boolean): string[] {
    const turn = this.turn();
    const lines = [...this.header];
    if (turn) lines.push(...renderChart(turn, { ...this.o, nowMs: final ? undefined : turn.now() }));
    return lines;
  }

  draw(final = false): void {
    const cols = this.out.columns ?? 100;
    // A wrapped line would break the cursor arithmetic of the redraw: cut every line to fit.
    const lines = this.frame(final).map((l) => fit(l, cols - 1));
    let s = this.drawn > 0 ? `\x1b[${this.drawn}F\x1b[J` : '';
    s += lines.join('\n') + '\n';
    this.out.write(s);
    this.drawn = lines.length;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.draw(true);
    this.out.write('\x1b[?25h');
    process.off('SIGINT', this.onSigint);
  }
}

/** One line per change (no TTY). Phase changes of one call in the same tick are grouped. */
export class PlainLog {
  private pending = new Map<number, { t: number; phases: CallPhase[]; call: LiveCall }>();
  private scheduled = false;
  constructor(
    private readonly write: (s: string) => void,
    private readonly tag: string,
  ) {}

  private line(t: number, what: string): void {
    this.write(`  ${this.tag.padEnd(11)} ${fmtS(t).padStart(8)}  ${what}\n`);
  }

  private flush(): void {
    this.scheduled = false;
    for (const { t, phases, call } of this.pending.values()) {
      let extra = '';
      const last = phases[phases.length - 1];
      if (phases.includes('complete')) extra = `  (arguments ${fmtBytes(call.argsBytes)})`;
      if (last === 'resulted') extra = `  (${call.ok === false ? 'error' : 'ok'}${call.resultChars !== undefined ? `, ${fmtBytes(call.resultChars)} result` : ''})`;
      this.line(t, `#${call.index} ${(call.name ?? '?').padEnd(10)} ${phases.join(' → ')}${extra}`);
    }
    this.pending.clear();
  }

  onChange(_turn: LiveTurn, c: LiveChange): void {
    if (c.kind === 'call') {
      const p = this.pending.get(c.call.index);
      if (p) p.phases.push(c.phase);
      else this.pending.set(c.call.index, { t: c.t, phases: [c.phase], call: c.call });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
      return;
    }
    this.flush();
    if (c.kind === 'text' && c.chars > 0 && !this.textShown) {
      this.textShown = true;
      this.line(c.t, 'model      writing text');
    } else if (c.kind === 'stream.end') this.line(c.t, `model      stream ended${c.finish ? ` (finish: ${c.finish})` : ''}`);
    else if (c.kind === 'done') this.line(c.t, 'turn done');
  }

  private textShown = false;

  end(): void {
    this.flush();
  }
}
