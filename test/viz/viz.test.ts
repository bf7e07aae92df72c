import * as fs from 'node:fs';
import * as path from 'node:path';
import { and, assign, createMachine, fromPromise, not, setup } from 'xstate';
import { diagramFiles, loadMachines, svgMarker, timelineFiles } from '../../src/viz/generate';
import { toDot, toMermaid, type VizMachine, wrapLabel } from '../../src/viz/statechart';

const ROOT = path.join(__dirname, '..', '..');
const VIZ = path.join(ROOT, 'visualizations');

describe('visualizations/ is in sync with machines/', () => {
  const machines = loadMachines(path.join(ROOT, 'machines'));

  it('finds every machine', () => {
    expect(machines.map((m) => m.id)).toEqual(expect.arrayContaining(['toolCall', 'turn']));
  });

  it('has the Mermaid and DOT sources and README the machines generate today (run `npm run viz` if this fails)', () => {
    for (const [name, text] of diagramFiles(machines)) {
      const file = path.join(VIZ, name);
      expect({ name, exists: fs.existsSync(file) }).toEqual({ name, exists: true });
      expect({ name, text: fs.readFileSync(file, 'utf8') }).toEqual({ name, text });
    }
  });

  it('has the timeline of the example turn as the replay draws it today', async () => {
    for (const [name, text] of await timelineFiles(ROOT)) {
      expect({ name, text: fs.readFileSync(path.join(VIZ, name), 'utf8') }).toEqual({ name, text });
    }
  });

  it('has an SVG rendered from the current DOT source of each machine', () => {
    for (const m of machines) {
      const svg = fs.readFileSync(path.join(VIZ, `${m.id}.svg`), 'utf8');
      expect(svg).toContain(svgMarker(toDot(m)));
      expect(svg).toMatch(/<svg[\s\S]*<\/svg>\s*$/);
    }
  });
});

describe('the statecharts read at a README column', () => {
  // GitHub shows README images at most ~880 px wide; a wider SVG is scaled down, text with it.
  // Laid out top to bottom with wrapped labels, each chart fits, so its 9–11 pt text keeps its size.
  it.each(['turn', 'toolCall'])('%s.svg is at most 880 px wide', (id) => {
    const svg = fs.readFileSync(path.join(VIZ, `${id}.svg`), 'utf8');
    const pt = Number(/<svg[^>]*\swidth="([\d.]+)pt"/.exec(svg)?.[1]);
    expect(pt * (96 / 72)).toBeLessThanOrEqual(880);
  });

  it('wraps long transition labels after the event and between actions', () => {
    expect(wrapLabel('tool.done / assign')).toEqual(['tool.done / assign']);
    expect(wrapLabel('stream.end / endStream, pump')).toEqual(['stream.end', '/ endStream, pump']);
    expect(wrapLabel('turn.abort [dropOnAbort] / discardAttempt, setOutcome(dropped)')).toEqual(['turn.abort [dropOnAbort]', '/ discardAttempt,', '  setOutcome(dropped)']);
    expect(wrapLabel('call.complete [endsReadyOnComplete] / assignOutcome')).toEqual(['call.complete', '[endsReadyOnComplete]', '/ assignOutcome']);
  });
});

describe('statechart generator', () => {
  const sample = setup({
    types: { context: {} as { n: number }, events: {} as { type: 'go' } | { type: 'stop' } | { type: 'tick' } },
    guards: { isBig: ({ context }) => context.n > 3, isOdd: ({ context }) => context.n % 2 === 1 },
    actions: { bump: assign({ n: ({ context }) => context.n + 1 }), log: () => undefined },
    actors: { work: fromPromise(async () => 1) },
    delays: { pause: 100 },
  }).createMachine({
    id: 'sample',
    context: { n: 0 },
    initial: 'idle',
    on: { tick: { actions: 'bump' } },
    states: {
      idle: { on: { go: { target: 'busy', guard: and(['isBig', not('isOdd')]), actions: ['log', { type: 'log' }] } } },
      busy: {
        type: 'parallel',
        states: {
          a: { initial: 'a1', states: { a1: { invoke: { src: 'work', onDone: 'a2' } }, a2: { type: 'final' } } },
          b: { initial: 'b1', states: { b1: { after: { pause: 'b2' } }, b2: {} } },
        },
        on: { stop: 'idle' },
      },
    },
  });

  it('renders states, parallel regions, guards, actions, invokes and delays in Mermaid', () => {
    const mmd = toMermaid(sample as unknown as VizMachine);
    expect(mmd.startsWith('stateDiagram-v2\n')).toBe(true);
    expect(mmd).toContain('[*] --> sample_idle');
    expect(mmd).toContain('sample_idle --> sample_busy : go [isBig && !isOdd] / log, log');
    expect(mmd).toContain('state "busy" as sample_busy {');
    expect(mmd).toMatch(/state "a" as sample_busy_a \{[\s\S]*\n\s+--\n[\s\S]*state "b" as sample_busy_b \{/);
    expect(mmd).toContain('sample_busy_a_a1 : invoke work');
    expect(mmd).toContain('sample_busy_a_a1 --> sample_busy_a_a2 : work done');
    expect(mmd).toContain('sample_busy_b_b1 --> sample_busy_b_b2 : after pause');
    expect(mmd).toContain('sample_busy_a_a2 --> [*]');
    expect(mmd).toContain('sample_busy --> sample_idle : stop');
    expect(mmd).toMatch(/note left of sample_idle\n.*\n {4}tick \/ bump\n {2}end note/);
    expect(mmd).not.toMatch(/xstate\.(raise|cancel)/);
  });

  it('renders the same walk as DOT with clusters for compound states', () => {
    const dot = toDot(sample as unknown as VizMachine);
    expect(dot).toMatch(/^digraph "sample" \{/);
    expect(dot).toContain('subgraph "cluster_sample.busy" {');
    expect(dot).toContain('"sample.idle" -> "sample.busy.a.a1" [label="go [isBig && !isOdd]\\n/ log, log", lhead="cluster_sample.busy"];');
    expect((dot.match(/\{/g) ?? []).length).toBe((dot.match(/\}/g) ?? []).length);
  });

  it('detects a changed machine (the staleness check can fail)', () => {
    const machines = loadMachines(path.join(ROOT, 'machines'));
    const tc = machines.find((m) => m.id === 'toolCall')!;
    const changed = createMachine({ ...(tc as unknown as { config: object }).config, id: 'toolCall', initial: 'complete' });
    const files = diagramFiles([changed as unknown as VizMachine]);
    expect(files.get('toolCall.mmd')).not.toBe(fs.readFileSync(path.join(VIZ, 'toolCall.mmd'), 'utf8'));
  });
});
