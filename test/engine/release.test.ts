import type { OutputEvent } from '../../src/release/output';
import type { StreamEvent } from '../../src/wire/events';
import { done, drive, end, finish, frag, id, kinds, text } from './helpers';

/**
 * The release side (SPEC §5), one test per case of the reference converter's unit tests
 * (research/server_anchors.md §1.7, names kept in the titles), adapted where SPEC §5 is stricter:
 * the ordered-prefix barrier also holds at finish, and completion is inferred when the top-level
 * object closes (evidence-only mode reproduces the finish-driven release).
 */

const toolUses = (out: OutputEvent[]) => out.filter((e): e is Extract<OutputEvent, { type: 'tool_use' }> => e.type === 'tool_use');
const endOf = (out: OutputEvent[]) => out.find((e): e is Extract<OutputEvent, { type: 'end' }> => e.type === 'end');
const EV = { completion: 'evidence-only' } as const;

describe('reference converter cases (§1.7)', () => {
  test('1 early finish waits for complete arguments', () => {
    const r = drive([id(0, 'c0', 'read_file'), frag(0, ''), frag(0, '{"path":'), finish(), frag(0, '"/tmp/example'), finish()], EV);
    expect(toolUses(r.out)).toHaveLength(0);
    r.c.feed(frag(0, '.txt"}'));
    const uses = toolUses(r.out);
    expect(uses).toHaveLength(1);
    expect(uses[0]!.input).toEqual({ path: '/tmp/example.txt' });
    expect(JSON.parse(uses[0]!.argsText)).toEqual({ path: '/tmp/example.txt' });
    r.c.feed(finish());
    r.c.feed(end);
    expect(toolUses(r.out)).toHaveLength(1);
    expect(endOf(r.out)).toEqual({ type: 'end', finish: 'tool_calls', released: 1 });
  });

  test('2 single valid tool limit survives multiple flushes', () => {
    const r = drive(
      [id(0, 'c0', 'bad'), frag(0, '[]'), id(1, 'c1', 'valid'), frag(1, '{}'), finish(), id(2, 'c2', 'later'), frag(2, '{}'), finish(), end],
      { singleTool: true },
    );
    expect(toolUses(r.out).map((u) => u.name)).toEqual(['valid']);
    expect(r.warnings).toContain('single_tool_suppressed');
  });

  test.each([
    ['parallel, incomplete first call', false],
    ['single tool, incomplete first call', true],
  ])('3 pending call survives partial flush (%s): the barrier holds at finish', (_label, singleTool) => {
    const r = drive([id(0, 'c0', 'first'), frag(0, '{"path":'), id(1, 'c1', 'second'), frag(1, '{"path":"/b"}'), finish()], { singleTool });
    expect(toolUses(r.out)).toHaveLength(0); // stricter than the reference: call 1 waits for call 0
    r.c.feed(frag(0, '"/a"}'));
    const names = toolUses(r.out).map((u) => u.name);
    expect(names).toEqual(singleTool ? ['first'] : ['first', 'second']);
    r.c.feed(finish());
    r.c.feed(end);
    expect(toolUses(r.out).map((u) => u.name)).toEqual(names);
  });

  test('3b pending call with delayed identity releases when identity arrives', () => {
    const r = drive([frag(0, '{}'), id(1, 'c1', 'second'), frag(1, '{"x":1}'), finish()]);
    expect(toolUses(r.out)).toHaveLength(0);
    r.c.feed(id(0, 'c0', 'first'));
    expect(toolUses(r.out).map((u) => u.name)).toEqual(['first', 'second']);
  });

  test.each([
    [true, false],
    [false, false],
    [true, true],
    [false, true],
  ])('4 pending call finalization (complete sibling %s, backend error %s)', (withComplete, withError) => {
    const events: StreamEvent[] = [];
    if (withComplete) events.push(id(0, 'c0', 'ok'), frag(0, '{"a":1}'));
    events.push(id(1, 'c1', 'cut'), frag(1, '{"path":'), finish());
    const r = drive(events);
    expect(toolUses(r.out)).toHaveLength(withComplete ? 1 : 0);
    if (withError) {
      r.c.feed({ type: 'stream.error', error: { type: 'api_error', message: 'boom' }, retryable: false });
      return r.c.done.then(() => {
        const terminal = r.out.filter((e) => e.type === 'error' || e.type === 'end');
        expect(terminal).toEqual([{ type: 'error', error: { type: 'api_error', message: 'boom' } }]);
      });
    }
    r.c.feed(end);
    expect(toolUses(r.out)).toHaveLength(withComplete ? 1 : 0);
    expect(endOf(r.out)?.released).toBe(withComplete ? 1 : 0);
    return undefined;
  });

  test.each([
    ['none', undefined],
    ['empty string', ''],
    ['{}', '{}'],
  ])('5 parameterless call completes on finish (%s)', (_l, args) => {
    const events: StreamEvent[] = [id(0, 'c0', 'ping_tool')];
    if (args !== undefined) events.push(frag(0, args));
    events.push(finish());
    const r = drive(events);
    expect(toolUses(r.out)).toHaveLength(args === '{}' ? 1 : 0); // explicit {} releases at once
    r.c.feed(end);
    const uses = toolUses(r.out);
    expect(uses).toHaveLength(1);
    expect(uses[0]!.input).toEqual({});
    expect(uses[0]!.argsText).toBe(args === '{}' ? '{}' : '');
  });

  test('6 identity-only call keeps late arguments', () => {
    const r = drive([id(0, 'c0', 'read'), finish()]);
    expect(toolUses(r.out)).toHaveLength(0);
    r.c.feed(frag(0, '{"path":"/x"}'));
    expect(toolUses(r.out)).toHaveLength(1);
    r.c.feed(end);
    expect(toolUses(r.out)).toHaveLength(1);
  });

  test('11 text stops before a tool block; the tool follows it', () => {
    const r = drive([text('Let me edit.'), id(0, 'c0', 'Edit'), frag(0, '{"f":1}'), finish(), end]);
    expect(kinds(r.out)).toEqual(['text', 'tool_use:0', 'end']);
  });

  test('12 EOF without a finish reason is a cut stream (SPEC §12): nothing released, an error, never an end', async () => {
    const r = drive([id(0, 'c0', 'read'), frag(0, '{"p":'), frag(0, '1}')], EV);
    expect(toolUses(r.out)).toHaveLength(0);
    r.c.feed(end);
    expect(kinds(r.out)).toEqual(['error']);
    expect(endOf(r.out)).toBeUndefined();
    const s = await r.c.done;
    expect(s.outcome).toBe('failed');
    expect(s.error?.type).toBe('stream_truncated');
  });

  test('13 fragmented arguments release once on the tool_calls finish (evidence-only) and EOF does not repeat', () => {
    const r = drive([id(0, 'c0', 'ls'), frag(0, ''), frag(0, '{"path":"/tmp'), frag(0, '"}')], EV);
    expect(toolUses(r.out)).toHaveLength(0);
    r.c.feed(finish());
    expect(toolUses(r.out)).toHaveLength(1);
    r.c.feed(end);
    expect(toolUses(r.out)).toHaveLength(1);
  });

  test('14 id-and-name-only call is released at EOF with input {}', () => {
    const r = drive([id(0, 'c0', 'now'), finish()]);
    expect(toolUses(r.out)).toHaveLength(0);
    r.c.feed(end);
    expect(toolUses(r.out)[0]).toMatchObject({ name: 'now', input: {}, argsText: '' });
  });

  test('15 length drops a last call with empty arguments', () => {
    const r = drive([id(0, 'c0', 'x'), frag(0, ''), finish('length'), end]);
    expect(toolUses(r.out)).toHaveLength(0);
    expect(endOf(r.out)).toEqual({ type: 'end', finish: 'length', released: 0 });
  });

  test('16 arguments and finish in one chunk release from that chunk', () => {
    const r = drive([id(0, 'c0', 'x'), frag(0, '{}'), finish()], EV);
    expect(toolUses(r.out)).toHaveLength(1);
  });

  test('17 truncated arguments are repaired only at the stream terminal', () => {
    const r = drive([id(0, 'c0', 'label'), frag(0, '{"label": "customer-eof", "literal_text": "cust'), finish('length')]);
    expect(toolUses(r.out)).toHaveLength(0); // never a repaired input early
    r.c.feed(end);
    const u = toolUses(r.out);
    expect(u).toHaveLength(1);
    expect(u[0]!.input).toEqual({ label: 'customer-eof' });
    expect(u[0]!.repaired).toBe(true);
    expect(JSON.parse(u[0]!.argsText)).toEqual({ label: 'customer-eof' });
  });

  test('18 only the final truncated call is repaired', () => {
    const r = drive([id(0, 'c0', 'a'), frag(0, '{"done": "yes"}'), id(1, 'c1', 'b'), frag(1, '{"done": "no", "tail": "cut'), finish('length'), end]);
    expect(toolUses(r.out).map((u) => u.input)).toEqual([{ done: 'yes' }, { done: 'no' }]);
    expect(toolUses(r.out)[0]!.argsText).toBe('{"done": "yes"}'); // verbatim
  });

  test.each([false, true])('19 later identity-less call does not make an earlier malformed call emit (single %s)', (singleTool) => {
    const r = drive([id(0, 'c0', 'a'), frag(0, '{"label": "cut'), frag(1, '{"x":1}'), finish('length'), end], { singleTool });
    expect(toolUses(r.out)).toHaveLength(0);
  });

  test.each(['stop', 'tool_calls', 'content_filter'] as const)('20 malformed non-length calls are suppressed (%s)', (reason) => {
    const r = drive([id(0, 'c0', 'a'), frag(0, '{"label": "cut"'), { type: 'finish', reason }, end]);
    expect(toolUses(r.out)).toHaveLength(0);
    expect(r.warnings).toContain('invalid_call');
  });

  test.each(['[]', 'null', '42', 'true', '"hello"'])('21 non-object input %s is suppressed', (args) => {
    for (const reason of ['tool_calls', 'length'] as const) {
      const r = drive([id(0, 'c0', 'a'), frag(0, args), { type: 'finish', reason }, end]);
      expect(toolUses(r.out)).toHaveLength(0);
      expect(endOf(r.out)?.released).toBe(0);
    }
  });

  test('22/26 suppressed calls consume no output slot; a later valid call follows', () => {
    const r = drive([frag(0, '{"no":"identity"}'), id(1, 'c1', 'b'), frag(1, '{"ok":true}'), finish(), end]);
    expect(toolUses(r.out).map((u) => u.index)).toEqual([1]);
    expect(endOf(r.out)?.released).toBe(1);
  });

  test('23 length with nothing recoverable releases nothing', () => {
    const r = drive([id(0, 'c0', 'a'), frag(0, '{"label": "cut'), finish('length'), end]);
    expect(toolUses(r.out)).toHaveLength(0);
  });

  test.each([
    ['id only', [id(0, 'c0', '')]],
    ['name only', [{ type: 'call.identity', index: 0, name: 'n' } as StreamEvent]],
    ['args only', [frag(0, '{}')]],
  ])('25 incomplete identity is never emitted (%s)', (_l, events) => {
    const r = drive([...(events as StreamEvent[]), finish(), end]);
    expect(toolUses(r.out)).toHaveLength(0);
  });

  test.each([
    ['between calls', [text('a'), id(0, 'c0', 'x'), frag(0, '{"a":'), text('b'), frag(0, '1}'), id(1, 'c1', 'y'), frag(1, '{}')], ['text', 'tool_use:0', 'text', 'tool_use:1']],
    ['after the last call', [text('a'), id(0, 'c0', 'x'), frag(0, '{"a":'), text('b'), frag(0, '1}')], ['text', 'tool_use:0', 'text']],
    ['no text before calls', [id(0, 'c0', 'x'), frag(0, '{"a":'), text('b'), id(1, 'c1', 'y'), frag(1, '{}'), frag(0, '1}')], ['tool_use:0', 'text', 'tool_use:1']],
  ])('28 text after a tool call keeps its place (%s)', (_l, events, expected) => {
    const r = drive([...(events as StreamEvent[]), finish(), end]);
    expect(kinds(r.out).filter((k) => k !== 'end')).toEqual(expected);
  });

  test('29 thinking, text, then a tool call', () => {
    const r = drive([{ type: 'thinking.delta', text: 'hmm' }, text('ok'), id(0, 'c0', 'x'), frag(0, '{}'), finish(), end]);
    expect(kinds(r.out)).toEqual(['thinking', 'text', 'tool_use:0', 'end']);
  });

  test('31 parallel calls flush sequentially on finish (evidence-only)', () => {
    const r = drive([id(0, 'c0', 'a'), frag(0, '{"x":1}'), id(1, 'c1', 'b'), frag(1, '{"y":2}')], EV);
    expect(toolUses(r.out)).toHaveLength(0);
    r.c.feed(finish());
    expect(kinds(r.out)).toEqual(['tool_use:0', 'tool_use:1']);
  });

  test('32 a shared backend id still gives two calls (the second renamed, with a warning)', () => {
    const r = drive([id(0, 'same', 'a'), frag(0, '{}'), id(1, 'same', 'b'), frag(1, '{}'), finish(), end]);
    expect(toolUses(r.out).map((u) => [u.index, u.backendId])).toEqual([
      [0, 'same'],
      [1, 'same_2'],
    ]);
    expect(r.warnings).toContain('duplicate_call_id');
  });
});

describe('completion evidence and late events', () => {
  test('evidence before identity and before arguments (completion-only chunk)', () => {
    const r = drive([done(0), id(0, 'c0', 'x')], EV);
    expect(toolUses(r.out)).toHaveLength(0); // nothing to release yet: no arguments
    r.c.feed(frag(0, '{"a":1}'));
    expect(toolUses(r.out)).toHaveLength(1);
  });

  test('repeated evidence releases once', () => {
    const r = drive([id(0, 'c0', 'x'), frag(0, '{}'), done(0), done(0), finish(), finish(), end], EV);
    expect(toolUses(r.out)).toHaveLength(1);
  });

  test('evidence-only: a closed object waits for its evidence; inferred: releases at the close', () => {
    const ev = drive([id(0, 'c0', 'x'), frag(0, '{"a":1}')], EV);
    expect(toolUses(ev.out)).toHaveLength(0);
    ev.c.feed(done(0));
    expect(toolUses(ev.out)).toHaveLength(1);
    const inf = drive([id(0, 'c0', 'x'), frag(0, '{"a":1}')]);
    expect(toolUses(inf.out)).toHaveLength(1);
  });

  test('late fragments warn once per call and never change the released input', () => {
    const r = drive([id(0, 'c0', 'x'), frag(0, '{"a":1}'), frag(0, ' ,"b":2}'), frag(0, 'more'), end]);
    expect(toolUses(r.out)[0]!.input).toEqual({ a: 1 });
    expect(r.warnings.filter((w) => w === 'late_fragment')).toHaveLength(1);
  });

  test('late warnings never contain argument contents', () => {
    const secret = 'sk-very-secret-value';
    const messages: string[] = [];
    const r = drive([id(0, 'c0', 'x'), frag(0, '{"k":1}')]);
    r.c.events.on('warning', (w) => messages.push(w.message));
    r.c.feed(frag(0, secret));
    r.c.feed(end);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(String(secret.length));
    expect(messages[0]).not.toContain(secret);
  });

  test('interleaved chat indices: each call releases when its own object closes, in order', () => {
    const r = drive([id(0, 'c0', 'a'), frag(0, '{"x":'), id(1, 'c1', 'b'), frag(1, '{"y":'), frag(1, '2}'), frag(0, '1}')]);
    expect(kinds(r.out)).toEqual(['tool_use:0', 'tool_use:1']);
  });

  test('a lower index that appears after a higher one: both released in model order', () => {
    const r = drive([id(1, 'c1', 'b'), frag(1, '{"y":2}')]);
    expect(toolUses(r.out)).toHaveLength(0); // index 0 may still appear
    r.c.feed(id(0, 'c0', 'a'));
    r.c.feed(frag(0, '{"x":1}'));
    expect(kinds(r.out)).toEqual(['tool_use:0', 'tool_use:1']);
    r.c.feed(finish());
    r.c.feed(end);
    expect(endOf(r.out)?.released).toBe(2);
  });

  test('an index gap that is never filled holds later calls until the end of the stream', () => {
    const r = drive([id(1, 'c1', 'b'), frag(1, '{"y":2}'), finish()]);
    expect(toolUses(r.out)).toHaveLength(0);
    r.c.feed(end);
    expect(kinds(r.out)).toEqual(['tool_use:1', 'end']);
  });

  test('empty-string identity never overwrites a known one', () => {
    const r = drive([id(0, 'c0', 'read'), { type: 'call.identity', index: 0, id: '', name: '' }, frag(0, '{}'), end]);
    expect(toolUses(r.out)[0]).toMatchObject({ backendId: 'c0', name: 'read' });
  });

  test('every split point of the argument text releases the same input exactly once', () => {
    const json = '{"path":"/tmp/é😀.txt","n":[1,2,{"k":"v\\"q"}]}';
    for (let i = 0; i <= json.length; i++) {
      const r = drive([id(0, 'c0', 'x'), frag(0, json.slice(0, i)), frag(0, json.slice(i)), end]);
      const uses = toolUses(r.out);
      expect(uses).toHaveLength(1);
      expect(uses[0]!.input).toEqual(JSON.parse(json));
    }
  });

  test('a message restart mid-stream is ignored with a warning', () => {
    const r = drive([{ type: 'message.start' }, text('a'), id(0, 'c0', 'x'), frag(0, '{}'), finish(), { type: 'message.start' }, end]);
    expect(r.warnings).toContain('message_restart');
    expect(endOf(r.out)).toBeDefined();
  });
});

describe('index gaps (the pump scans step by one only while CallIndexSet.dense)', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { CallIndexSet } = require('../../src/release/rules') as typeof import('../../src/release/rules');

  test('dense: every index from 0 to the highest seen is there', () => {
    const s = new CallIndexSet();
    expect(s.dense).toBe(true);
    s.add(0);
    s.add(1);
    expect(s.dense).toBe(true);
    s.add(3);
    expect(s.dense).toBe(false);
    s.add(2);
    expect(s.dense).toBe(true);
  });

  test.each(['gateway', 'execute'] as const)('%s: a call after a gap is released (in order) once the stream ends, and the turn finishes', async (mode) => {
    const r = drive([id(0, 'c0', 'read_file'), frag(0, '{"a":0}'), id(2, 'c2', 'read_file'), frag(2, '{"a":2}'), id(3, 'c3', 'read_file'), frag(3, '{"a":3}')], {
      mode,
      classify: () => ({ safe: true, needsApproval: false }),
      runTool: (call) => Promise.resolve({ ok: true, content: String(call.index) }),
    });
    expect(toolUses(r.out).map((u) => u.index)).toEqual([0]); // index 1 may still appear
    r.c.feed(finish());
    r.c.feed(end);
    expect(toolUses(r.out).map((u) => u.index)).toEqual([0, 2, 3]);
    const s = await r.c.done;
    expect(s.outcome).toBe('done');
    if (mode === 'execute') expect(s.history[1]).toMatchObject({ role: 'tool', results: [{ content: '0' }, { content: '2' }, { content: '3' }] });
  });
});
