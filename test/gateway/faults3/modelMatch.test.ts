/**
 * Linear-time model matching (src/gateway/modelMatch.ts): `--model-map` globs are matched without
 * a backtracking regular expression, model names are capped, and every place that matches a model
 * name uses the one matcher. Wall-clock bounds are generous (≪ 1 s where a backtracking RegExp took
 * seconds): this suite is in jest.config.ts's SERIAL list.
 */
import { performance } from 'node:perf_hooks';
import { mapModel, patternMatches } from '../../../src/gateway/canonical';
import { Logger } from '../../../src/gateway/log';
import { checkModelName, globMatches, MAX_MODEL_NAME } from '../../../src/gateway/modelMatch';
import { startGateway } from '../../../src/gateway/server';
import { chatChunk, startScriptedUpstream } from '../../../src/gateway/scripted';
import { findModel } from '../../../src/gateway/upstream/models';
import { rawRequest } from '../helpers';

jest.setTimeout(60_000);

/** The old, backtracking reading of a glob: the reference for what matches. */
const reference = (pattern: string, name: string): boolean =>
  new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`).test(name);

describe('globMatches', () => {
  test('agrees with the regular-expression reading on every small pattern and name over {a, b, *}', () => {
    const words = (alphabet: string[], max: number): string[] => {
      let level = [''];
      const all = [''];
      for (let n = 1; n <= max; n++) {
        level = level.flatMap((w) => alphabet.map((c) => w + c));
        all.push(...level);
      }
      return all;
    };
    const patterns = words(['a', 'b', '*'], 5);
    const names = words(['a', 'b'], 6);
    const wrong: string[] = [];
    let checked = 0;
    for (const p of patterns)
      for (const n of names) {
        if (globMatches(p, n) !== reference(p, n)) wrong.push(`${p} vs ${n}`);
        checked++;
      }
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThan(30_000);
  });

  test('regex characters in a pattern are literal; an empty name matches only stars', () => {
    expect(globMatches('gpt-4.1*', 'gpt-4.1-mini')).toBe(true);
    expect(globMatches('gpt-4.1*', 'gpt-4x1-mini')).toBe(false);
    expect(globMatches('a(b)+[c]?', 'a(b)+[c]?')).toBe(true);
    expect(globMatches('**', '')).toBe(true);
    expect(globMatches('a*', '')).toBe(false);
  });

  test.each([3, 5, 8])('%i stars against 5,000-char near misses: far below 1 s', (stars) => {
    const pattern = Array.from({ length: stars + 1 }, () => 'a').join('*') + 'b'; // a*a*…*ab
    const name = 'a'.repeat(5000); // no final b: the worst case for a backtracking matcher
    const t0 = performance.now();
    for (let i = 0; i < 20; i++) expect(globMatches(pattern, name)).toBe(false);
    const ms = (performance.now() - t0) / 20;
    expect(ms).toBeLessThan(50);
  });
});

describe('one matcher everywhere, names capped', () => {
  test('mapModel, patternMatches and findModel use it (a pathological pattern answers at once)', () => {
    const rules = [{ pattern: '*a*a*a*a*a*b', target: 'x' }, { pattern: 'claude-*', target: 'qwen' }];
    const name = 'a'.repeat(MAX_MODEL_NAME);
    const t0 = performance.now();
    expect(mapModel({ rules }, name)).toBe(name);
    expect(mapModel({ rules }, 'claude-sonnet-4')).toBe('qwen');
    expect(patternMatches(rules[0]!.pattern, name)).toBe(false);
    expect(findModel([], { rules }, name)).toBeUndefined();
    expect(findModel([], { rules }, 'claude-x')).toMatchObject({ id: 'claude-x', owner: 'sluice' });
    expect(performance.now() - t0).toBeLessThan(100);
  });

  test('a name over the cap is a clear 400', () => {
    expect(() => checkModelName('m'.repeat(MAX_MODEL_NAME))).not.toThrow();
    expect(() => checkModelName('m'.repeat(MAX_MODEL_NAME + 1))).toThrow(`model: a model name is at most ${MAX_MODEL_NAME} characters (got ${MAX_MODEL_NAME + 1})`);
    expect(() => findModel([], { rules: [] }, 'm'.repeat(5000))).toThrow(/model id: a model name is at most/);
  });
});

describe('over a real gateway with a 5-star --model-map', () => {
  test('5,000-char model names: requests and GET /v1/models/{id} answer 400 at once; /health stays fast', async () => {
    const up = await startScriptedUpstream({ script: [{ t: 0, data: chatChunk({ content: 'hi' }) }, { t: 0, data: chatChunk({ finish: 'stop' }) }, { t: 0, data: '[DONE]' }] });
    const models = { rules: [{ pattern: '*a*a*a*a*a*b', target: 'backend-b' }] };
    const gw = await startGateway({ upstream: up.url, logger: new Logger('error', () => undefined), pingIntervalMs: 0, models });
    try {
      const long = 'a'.repeat(5000);
      const t0 = performance.now();
      const answers = await Promise.all([
        rawRequest(gw.url, { path: '/v1/messages', body: JSON.stringify({ model: long, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }) }),
        rawRequest(gw.url, { path: '/v1/chat/completions', body: JSON.stringify({ model: long, messages: [{ role: 'user', content: 'hi' }] }) }),
        rawRequest(gw.url, { path: '/v1/responses', body: JSON.stringify({ model: long, input: 'hi' }) }),
        rawRequest(gw.url, { method: 'GET', path: `/v1/models/${long}` }),
        rawRequest(gw.url, { method: 'GET', path: '/health' }),
      ]);
      expect(performance.now() - t0).toBeLessThan(1000);
      expect(answers.map((a) => a.status)).toEqual([400, 400, 400, 400, 200]);
      for (const a of answers.slice(0, 4)) expect(a.text).toContain(`at most ${MAX_MODEL_NAME} characters`);
      // A name at the cap that almost matches the 5-star pattern is matched, fast, and passes through.
      const near = 'a'.repeat(MAX_MODEL_NAME);
      const t1 = performance.now();
      const ok = await rawRequest(gw.url, { path: '/v1/chat/completions', body: JSON.stringify({ model: near, messages: [{ role: 'user', content: 'hi' }] }) });
      expect(ok.status).toBe(200);
      expect(performance.now() - t1).toBeLessThan(1000);
      expect((up.requests.at(-1)?.body as { model?: string }).model).toBe(near);
      const hit = await rawRequest(gw.url, { path: '/v1/chat/completions', body: JSON.stringify({ model: `${near.slice(1)}b`, messages: [{ role: 'user', content: 'hi' }] }) });
      expect(hit.status).toBe(200);
      expect((up.requests.at(-1)?.body as { model?: string }).model).toBe('backend-b');
    } finally {
      await gw.close();
      await up.close();
    }
  });
});
