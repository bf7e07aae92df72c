import { z } from 'zod';
import { classifyCall, explainSafety, isSafeCall } from '../../src/execute/safety';
import { createToolRegistry, defineTool, type ToolKind } from '../../src/execute/tools';
import { loadShellParser } from '../../src/execute/shell';

// The shell parser loads asynchronously (runTurn awaits it); these tests classify directly.
beforeAll(() => loadShellParser());

const tool = (name: string, kind: ToolKind, extra: { commandField?: string; needsApproval?: boolean } = {}) =>
  defineTool({ name, kind, input: z.object({ command: z.string().optional(), cmd: z.string().optional() }), run: () => '', ...extra });

describe('isSafeCall', () => {
  test.each([
    ['read', true],
    ['search', true],
    ['fetch', true],
    ['edit', false],
    ['delete', false],
    ['move', false],
    ['think', false],
    ['other', false],
  ] as Array<[ToolKind, boolean]>)('kind %s → %s', (kind, safe) => {
    expect(isSafeCall(tool('t', kind), {})).toBe(safe);
  });

  test('unknown tools are never safe', () => {
    expect(isSafeCall(undefined, { command: 'ls' })).toBe(false);
    expect(isSafeCall(null, {})).toBe(false);
    expect(explainSafety(undefined, {}).reason).toBe('unknown tool');
  });

  test('execute is safe only for a read-only command', () => {
    const sh = tool('sh', 'execute');
    expect(isSafeCall(sh, { command: 'git status' })).toBe(true);
    expect(isSafeCall(sh, { command: 'ls | grep x' })).toBe(true);
    expect(isSafeCall(sh, { command: 'rm -rf /' })).toBe(false);
    expect(isSafeCall(sh, { command: 'bash -c "ls"' })).toBe(false);
    expect(isSafeCall(sh, { command: 42 })).toBe(false);
    expect(isSafeCall(sh, {})).toBe(false);
    expect(isSafeCall(sh, null)).toBe(false);
    expect(isSafeCall(sh, ['ls'])).toBe(false);
    expect(explainSafety(sh, { command: 'rm x' }).reason).toBe('not read-only: unknown command rm');
  });

  test('command field is configurable per call and per tool', () => {
    const sh = tool('sh', 'execute');
    expect(isSafeCall(sh, { cmd: 'ls' })).toBe(false);
    expect(isSafeCall(sh, { cmd: 'ls' }, { commandField: 'cmd' })).toBe(true);
    const own = tool('sh2', 'execute', { commandField: 'cmd' });
    expect(isSafeCall(own, { cmd: 'ls', command: 'rm x' })).toBe(true);
    expect(isSafeCall(own, { cmd: 'rm x', command: 'ls' }, { commandField: 'command' })).toBe(false);
  });
});

describe('classifyCall', () => {
  const registry = createToolRegistry([
    tool('read', 'read'),
    tool('shell', 'execute'),
    defineTool({ name: 'write', kind: 'edit', input: z.object({ path: z.string() }), needsApproval: true, run: () => '' }),
  ]);

  test('unknown tool and invalid input become problems and never need approval', () => {
    expect(classifyCall(registry, 'ghost', {})).toMatchObject({ safe: false, needsApproval: false, problem: { ok: false, synthetic: 'unknown_tool' } });
    expect(classifyCall(registry, 'write', { path: 3 })).toMatchObject({ safe: false, problem: { synthetic: 'invalid_input' } });
  });

  test('safety and approval of valid calls', () => {
    expect(classifyCall(registry, 'read', {})).toEqual({ safe: true, needsApproval: false });
    expect(classifyCall(registry, 'shell', { command: 'cat x' })).toEqual({ safe: true, needsApproval: false });
    expect(classifyCall(registry, 'shell', { command: 'cat x > y' })).toEqual({ safe: false, needsApproval: false });
    expect(classifyCall(registry, 'write', { path: 'a' })).toEqual({ safe: false, needsApproval: true });
  });
});
