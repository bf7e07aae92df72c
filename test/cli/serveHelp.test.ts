/**
 * `sluice serve --help` lists every route the gateway answers: the route paths written in the
 * gateway's sources (the API route table, the operations paths, the models routes) are all in
 * its "Routes:" lines, so a new route cannot ship without its line.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { HELP } from '../../src/cli/serve';

const GATEWAY = path.resolve(__dirname, '../../src/gateway');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [fs.readFileSync(p, 'utf8')] : [];
  });
}

test('every route in the gateway sources is in the help text', () => {
  const code = sources(GATEWAY).join('\n');
  const routes = new Set<string>();
  for (const m of code.matchAll(/\[\s*'(\/[\w/]+)'\s*,\s*\w+Api\s*\]/g)) routes.add(m[1]!); // the API route table
  for (const m of code.matchAll(/\bpath === '(\/[\w/]*)'/g)) routes.add(m[1]!); // operations and count_tokens
  // The models routes are one pattern (`/v1/models` and `/v1/models/{id}`, also without `/v1`).
  if (/models\(\?:\\\/\(\.\+\)\)\?/.test(code)) routes.add('/v1/models').add('/v1/models/{id}');
  expect([...routes]).toEqual(expect.arrayContaining(['/v1/messages', '/v1/chat/completions', '/chat/completions', '/v1/models', '/v1/models/{id}', '/readyz', '/metrics', '/']));
  const help = HELP.slice(HELP.indexOf('Routes:'), HELP.indexOf('\n\n', HELP.indexOf('Routes:')));
  const listed = new Set(help.match(/\/[\w/{}]*/g));
  expect([...routes].filter((r) => !listed.has(r))).toEqual([]);
});
