import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { parseConfig } from '../src/config';

test('defaults fill in missing keys', () => {
  assert.equal(parseConfig('{}').port, 8080);
});

test('strict mode rejects unknown keys', () => {
  assert.throws(() => parseConfig('{"databaseUrl":"x","prot":1}', { strict: true }), /unknown key/);
});

test('parseConfig keeps feature flags', () => {
  assert.deepEqual(parseConfig('{"features":{"beta":true}}').features, { beta: true });
});
