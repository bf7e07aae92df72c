/**
 * The house rules for imports (docs/architecture.md "Layers"): every relative import in src/ and
 * machines/ — static, type-only, `export … from`, `import()` and `require()` alike — goes to the
 * importer's own layer or one below it, and the import graph has no cycle. The layer of a file is
 * the first LAYERS entry whose prefix it starts with (the table is docs/architecture.md's).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** Lowest first. A module may import from its own layer and the layers above it in this list. */
const LAYERS: { name: string; paths: string[] }[] = [
  { name: 'base', paths: ['src/calls.ts', 'src/textRuns.ts', 'src/nodeCrypto.ts', 'src/walk.ts'] },
  { name: 'wire', paths: ['src/wire/', 'src/args/', 'src/parsers/'] },
  { name: 'model', paths: ['src/release/', 'src/history/', 'src/execute/', 'src/encode/'] },
  // src/telemetry/gateway.ts is the gateway's observer (it sits beside the library's telemetry for names.ts).
  { name: 'services', paths: ['src/telemetry/gateway.ts', 'src/gateway/', 'src/demo/', 'src/dbos/', 'src/report/'] },
  { name: 'engine', paths: ['machines/', 'src/engine/', 'src/journal/', 'src/telemetry/', 'src/trace/'] },
  { name: 'surface', paths: ['src/cli/', 'src/viz/', 'src/entries/', 'src/index.ts'] },
];
/** The order, lowest first (LAYERS lists `services` before `engine` only so its src/telemetry/gateway.ts entry wins). */
const ORDER = ['base', 'wire', 'model', 'engine', 'services', 'surface'];

function layerOf(file: string): string {
  const l = LAYERS.find((x) => x.paths.some((p) => (p.endsWith('/') ? file.startsWith(p) : file === p)));
  if (!l) throw new Error(`${file}: in no layer (add its folder to LAYERS here and to docs/architecture.md "Layers")`);
  return l.name;
}

function walk(dir: string, out: string[]): string[] {
  for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) walk(rel, out);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

const SPECIFIER = /(?:^|[^.\w$])(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s+)?['"](\.[^'"]+)['"]|\bimport\(\s*['"](\.[^'"]+)['"]\s*\)|\brequire\(\s*['"](\.[^'"]+)['"]\s*\)/gm;

/** file → the files it imports (relative specifiers, resolved to .ts or /index.ts). */
function importGraph(): Map<string, string[]> {
  const files = [...walk('src', []), ...walk('machines', [])];
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const f of files) {
    // Comments out, so an example in a doc comment is not an import.
    const text = fs.readFileSync(path.join(ROOT, f), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
    const targets = new Set<string>();
    for (const m of text.matchAll(SPECIFIER)) {
      const base = path.posix.normalize(path.posix.join(path.posix.dirname(f), m[1] ?? m[2] ?? m[3]!));
      const target = [`${base}.ts`, `${base}/index.ts`].find((c) => known.has(c));
      if (target) targets.add(target);
    }
    graph.set(f, [...targets]);
  }
  return graph;
}

/** Strongly connected components with more than one file (or a file importing itself): the cycles. */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe('the import graph of src/ and machines/', () => {
  const graph = importGraph();

  test('the layer table names every file, and every layer is in the order', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect([...new Set(LAYERS.map((l) => l.name))].sort()).toEqual([...ORDER].sort());
    for (const f of graph.keys()) expect(typeof layerOf(f)).toBe('string');
  });

  test('no import climbs to a higher layer', () => {
    const up: string[] = [];
    for (const [from, targets] of graph) {
      const a = ORDER.indexOf(layerOf(from));
      for (const to of targets) if (ORDER.indexOf(layerOf(to)) > a) up.push(`${from} (${layerOf(from)}) → ${to} (${layerOf(to)})`);
    }
    expect(up).toEqual([]);
  });

  test('no import cycle (static, type-only or dynamic)', () => {
    expect(cycles(graph).map((c) => c.join(' ⇄ '))).toEqual([]);
  });

  test('the checker sees a cycle and a climb when there is one', () => {
    const g = new Map([
      ['src/cli/a.ts', ['src/cli/b.ts']],
      ['src/cli/b.ts', ['src/cli/a.ts']],
      ['src/wire/c.ts', []],
    ]);
    expect(cycles(g)).toEqual([['src/cli/a.ts', 'src/cli/b.ts']]);
    expect(ORDER.indexOf(layerOf('src/gateway/server.ts'))).toBeGreaterThan(ORDER.indexOf(layerOf('src/engine/runTurn.ts')));
    expect(layerOf('src/telemetry/gateway.ts')).toBe('services');
  });
});
