/**
 * Installing sluice from a git URL on a machine without its dev tools (issue 10): npm clones the
 * committed HEAD, installs sluice's dev dependencies in its own cache, runs `prepare` (the build)
 * and installs the packed result; the consumer project gets no TypeScript. Slow (a full build in
 * npm's cache, minutes on a busy machine), so it runs only with SLUICE_PACKAGE_GIT=1:
 * `npm run test:package-git`.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const enabled = process.env.SLUICE_PACKAGE_GIT === '1';

(enabled ? describe : describe.skip)('install from a git URL (SLUICE_PACKAGE_GIT=1)', () => {
  jest.setTimeout(900_000);

  test('npm install git+file://<repo>#<HEAD> builds it and gives ESM and CommonJS named exports', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-git-'));
    try {
      fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'git-consumer', private: true, type: 'module' }));
      const head = (await run('git', ['rev-parse', 'HEAD'], { cwd: ROOT })).stdout.trim();
      await run('npm', ['install', `git+file://${ROOT}#${head}`, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, maxBuffer: 32 << 20 });
      expect(fs.existsSync(path.join(dir, 'node_modules/typescript'))).toBe(false);
      const esm = await run(process.execPath, ['--input-type=module', '-e', "import { runTurn, defineTool } from 'sluice'; import { checkHistory } from 'sluice/history'; console.log(typeof runTurn, typeof defineTool, typeof checkHistory)"], { cwd: dir });
      expect(esm.stdout.trim()).toBe('function function function');
      const cjs = await run(process.execPath, ['-e', "const { runTurn } = require('sluice'); const { listFamilies } = require('sluice/parsers'); console.log(typeof runTurn, listFamilies().length > 0)"], { cwd: dir });
      expect(cjs.stdout.trim()).toBe('function true');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
