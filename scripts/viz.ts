import * as fs from 'node:fs';
import * as path from 'node:path';
import { diagramFiles, findRepoRoot, loadMachines, svgMarker, timelineFiles } from '../src/viz/generate';
import { toDot } from '../src/viz/statechart';

/**
 * Writes visualizations/: Mermaid + DOT sources of every machine in machines/, an SVG of each
 * (DOT rendered by Graphviz compiled to WebAssembly: @hpcc-js/wasm-graphviz, no browser, no
 * binary download), the timeline of the example coding turn, and a README that shows them.
 *
 *   npm run viz                          (build, then write)
 *   node dist/scripts/viz.js --check     (exit 1 when visualizations/ is stale; writes nothing)
 */

interface Graphviz {
  dot(src: string, format?: 'svg'): string;
}

async function loadGraphviz(): Promise<Graphviz> {
  // ESM-only package: loaded at run time (Node ≥ 20.19 can require ESM). Computed specifier so
  // TypeScript keeps it a plain dynamic import.
  const spec = '@hpcc-js/wasm-graphviz';
  const mod = (await import(spec)) as { Graphviz: { load(): Promise<Graphviz> } };
  return mod.Graphviz.load();
}

export async function main(argv: string[]): Promise<number> {
  const check = argv.includes('--check');
  const root = findRepoRoot(__dirname);
  const machines = loadMachines(path.resolve(__dirname, '..', 'machines'));
  if (machines.length === 0) throw new Error('no machines found in machines/');
  const outDir = path.join(root, 'visualizations');
  const files = diagramFiles(machines);
  for (const [name, text] of await timelineFiles(root)) files.set(name, text);
  const gv = await loadGraphviz();
  for (const m of machines) {
    const dot = toDot(m);
    const svg = gv.dot(dot, 'svg');
    // The marker goes right after the XML declaration / doctype, before <svg>.
    const at = svg.indexOf('<svg');
    files.set(`${m.id}.svg`, `${svg.slice(0, at)}${svgMarker(dot)}\n${svg.slice(at)}`);
  }
  const stale: string[] = [];
  for (const [name, text] of files) {
    const file = path.join(outDir, name);
    const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
    if (current === text) continue;
    stale.push(name);
    if (!check) {
      fs.mkdirSync(outDir, { recursive: true });
      fs.writeFileSync(file, text);
    }
  }
  if (check) {
    if (stale.length) process.stderr.write(`visualizations/ is stale: ${stale.join(', ')} (run npm run viz)\n`);
    else process.stdout.write(`visualizations/ is up to date (${machines.map((m) => m.id).join(', ')})\n`);
    return stale.length ? 1 : 0;
  }
  process.stdout.write(
    stale.length ? `wrote ${stale.map((s) => `visualizations/${s}`).join(', ')}\n` : `visualizations/ is up to date (${machines.map((m) => m.id).join(', ')})\n`,
  );
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      process.stderr.write(`viz: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
