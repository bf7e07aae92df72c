import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * The sample workspace (examples/workspace/ in the repository) and its temporary copies. The demo
 * edits a copy, never the original.
 */

/** Find examples/workspace by walking up from this file (works from src/ under ts-node and from dist/). */
export function findSampleWorkspace(from = __dirname): string | undefined {
  let dir = from;
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, 'examples', 'workspace');
    if (fs.existsSync(path.join(candidate, 'src', 'app.ts'))) return candidate;
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return undefined;
}

/** Copy the workspace to a fresh temporary folder; returns its path. */
export function copyWorkspace(src: string, label = 'sluice-demo-'): string {
  const dst = fs.mkdtempSync(path.join(os.tmpdir(), label));
  fs.cpSync(src, dst, { recursive: true });
  return dst;
}

export function removeWorkspace(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}
