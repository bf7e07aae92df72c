/**
 * The answers given before Node's HTTP parser produced a request reach a client that is still
 * uploading, like every other early answer (body.ts `answerSocket`, the raw-socket form of
 * `drainRefused`): Node's own parser errors (`clientError`: a malformed request line, oversized
 * headers) and the connection cap's 503 are written, the rest of the upload is read and discarded,
 * and the connection closes cleanly once the client ends its side — no reset. Raw `net` clients
 * against a real gateway on 127.0.0.1, each in two manners: reading while it uploads, and reading
 * only after its whole upload was written (most HTTP clients).
 */
import * as net from 'node:net';
import { Logger, type LogRecord } from '../../../src/gateway/log';
import { chatChunk, Gate, startScriptedUpstream, type ScriptedUpstream } from '../../../src/gateway/scripted';
import { REFUSED_DRAINING_MAX } from '../../../src/gateway/hygiene';
import { type Gateway, startGateway } from '../../../src/gateway/server';

jest.setTimeout(60_000);

const MiB = 1024 * 1024;

interface Upload {
  /** What the gateway sent back. */
  text: string;
  /** The socket error the client saw (ECONNRESET, EPIPE), if any. */
  error?: string;
  /** The client wrote its whole upload. */
  sentAll: boolean;
  /** The gateway ended its side cleanly (the client saw `end`). */
  ended: boolean;
}

type Manner = 'reading while uploading' | 'reading after the upload';
const MANNERS: Manner[] = ['reading while uploading', 'reading after the upload'];

/** Connect, send `head`, then `bytes` more (64 KiB every `paceMs` when set: a slow link), then end; the answer as the client saw it. */
function upload(gw: Gateway, head: string, bytes: number, manner: Manner, paceMs = 0): Promise<Upload> {
  return new Promise((resolve) => {
    const u = new URL(gw.url);
    // Half-open allowed: the gateway's FIN after its answer does not end this client's upload.
    const s = net.connect({ port: Number(u.port), host: u.hostname, allowHalfOpen: true });
    const got: Buffer[] = [];
    const r: Upload = { text: '', sentAll: false, ended: false };
    if (manner === 'reading after the upload') s.pause();
    s.on('data', (c: Buffer) => got.push(c));
    s.on('end', () => (r.ended = true));
    s.on('error', (e: NodeJS.ErrnoException) => (r.error ??= e.code));
    s.on('close', () => {
      r.text = Buffer.concat(got).toString('utf8');
      resolve(r);
    });
    s.on('connect', () => {
      s.write(head);
      const block = Buffer.alloc(64 * 1024, 'x');
      let sent = 0;
      const pump = (): void => {
        while (sent < bytes) {
          sent += block.length;
          const more = s.write(block);
          if (paceMs > 0 && sent < bytes) return void setTimeout(pump, paceMs);
          if (!more) return void s.once('drain', pump);
        }
        r.sentAll = true;
        s.end();
        s.resume();
      };
      pump();
    });
  });
}

let up: ScriptedUpstream;
beforeAll(async () => {
  up = await startScriptedUpstream({ script: [{ t: 0, data: chatChunk({ content: 'hi' }) }, { t: 1, data: chatChunk({ finish: 'stop' }) }, { t: 2, data: '[DONE]' }] });
});
afterAll(async () => {
  await up.close();
});

/** The `request` log lines of the current test's gateway (one per request the router ran). */
let routed: LogRecord[] = [];

async function gateway(extra: Record<string, unknown> = {}): Promise<Gateway> {
  const mine: LogRecord[] = (routed = []);
  const logger = new Logger('info', (r) => {
    if (r.msg === 'request') mine.push(r);
  });
  return startGateway({ upstream: up.url, logger, pingIntervalMs: 0, bodyWorker: false, ...extra });
}

describe("Node's parser errors (clientError): the answer, then the upload drained", () => {
  test.each(MANNERS)('an invalid request line followed by a 4 MiB upload, %s: the 400, no reset', async (manner) => {
    const gw = await gateway();
    try {
      const r = await upload(gw, 'NOT A REQUEST LINE\r\n\r\n', 4 * MiB, manner);
      expect(r.text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(r.text).toContain('"type":"invalid_request_error"');
      expect(r.text).toContain('malformed HTTP request');
      // Answered once (Node reports every later chunk as another parse error: ignored).
      expect(r.text.match(/HTTP\/1\.1/g)).toHaveLength(1);
      expect(r.error).toBeUndefined();
      expect(r.sentAll).toBe(true);
      expect(r.ended).toBe(true);
    } finally {
      await gw.close();
    }
  });

  test.each(MANNERS)('an over-long header while uploading 4 MiB, %s: the 431, no reset', async (manner) => {
    const gw = await gateway();
    try {
      const r = await upload(gw, `POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-long: ${'a'.repeat(64 * 1024)}`, 4 * MiB, manner);
      expect(r.text).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
      expect(r.text).toContain('request headers are too large');
      expect(r.error).toBeUndefined();
      expect(r.sentAll).toBe(true);
      expect(r.ended).toBe(true);
    } finally {
      await gw.close();
    }
  });

  test.each(MANNERS)('a chunked body whose chunk size is not hex, then 4 MiB more, %s: the 400, no reset, the request ends', async (manner) => {
    const gw = await gateway();
    try {
      const head = 'POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n1\r\n{\r\nZZ\r\n';
      const r = await upload(gw, head, 4 * MiB, manner);
      expect(r.text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(r.text.match(/HTTP\/1\.1/g)).toHaveLength(1);
      expect(r.error).toBeUndefined();
      expect(r.sentAll).toBe(true);
      expect(r.ended).toBe(true);
      // The route that was reading the body ends too (its client is gone: 499), and nothing stays charged.
      const until = Date.now() + 5000;
      while (routed.length === 0 && Date.now() < until) await new Promise((res) => setTimeout(res, 20));
      expect(routed.map((l) => l.status)).toEqual([499]);
      expect((await fetch(`${gw.url}/health`).then((res) => res.json())) as { bodyBudgetInUse: number }).toMatchObject({ bodyBudgetInUse: 0 });
    } finally {
      await gw.close();
    }
  });

  test('garbage pipelined behind a stream in progress: the connection is closed, no 400 written into the stream', async () => {
    const gate = new Gate();
    const held = await startScriptedUpstream({ gate, script: [{ t: 0, data: chatChunk({ content: 'first' }) }, { t: 1, gate: true }, { t: 2, data: chatChunk({ finish: 'stop' }) }, { t: 3, data: '[DONE]' }] });
    const gw = await startGateway({ upstream: held.url, logger: new Logger('error', () => undefined), pingIntervalMs: 0, bodyWorker: false });
    try {
      const u = new URL(gw.url);
      const s = net.connect(Number(u.port), u.hostname);
      s.on('error', () => undefined);
      let text = '';
      s.on('data', (d: Buffer) => (text += d.toString('utf8')));
      const closed = new Promise<void>((r) => s.once('close', () => r()));
      const body = JSON.stringify({ model: 'm', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'hi' }] });
      s.write(`POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      await gate.reached();
      const until = Date.now() + 5000;
      while (!text.includes('first') && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(text).toContain('first');
      s.write('NOT A REQUEST LINE\r\n\r\n');
      await closed;
      expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(text).not.toContain('HTTP/1.1 400');
    } finally {
      gate.release();
      await gw.close();
      await held.close();
    }
  });

  test('the drain is bounded: past its bytes the gateway stops reading and closes at its time bound', async () => {
    const gw = await gateway({ earlyAnswerDrain: { bytes: 1 * MiB, ms: 500 } });
    try {
      const t0 = Date.now();
      const r = await upload(gw, 'NOT A REQUEST LINE\r\n\r\n', 64 * MiB, 'reading while uploading');
      // A client reading while it uploads has its answer; it cannot send the 64 MiB.
      expect(r.text).toMatch(/^HTTP\/1\.1 400 /);
      expect(r.sentAll).toBe(false);
      expect(Date.now() - t0).toBeLessThan(10_000);
    } finally {
      await gw.close();
    }
  });
});

describe('the connection cap: the 503, then the upload drained', () => {
  /** `n` connections each with a request in progress (its body never sent): none can be evicted. */
  async function busy(gw: Gateway, n: number): Promise<net.Socket[]> {
    const u = new URL(gw.url);
    const out: net.Socket[] = [];
    for (let i = 0; i < n; i++) {
      const s = net.connect(Number(u.port), u.hostname);
      s.on('error', () => undefined);
      await new Promise<void>((r) => s.once('connect', () => r()));
      s.write('POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{');
      out.push(s);
    }
    // Until the gateway has seen both requests (each socket then has a request in progress).
    const until = Date.now() + 5000;
    while (gw.openSockets() < n && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 100));
    return out;
  }

  test.each(MANNERS)('a 1 MiB body beyond the cap, sent over 1.5 s, %s: the 503 with its body, then the close; the request never runs', async (manner) => {
    const gw = await gateway({ maxConnections: 2 });
    const held = await busy(gw, 2);
    const before = up.requests.length;
    try {
      const head = `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${MiB}\r\n\r\n`;
      // 16 pieces of 64 KiB, 100 ms apart: longer than the second the refused socket used to be kept.
      const r = await upload(gw, head, MiB, manner, 100);
      expect(r.text).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
      expect(r.text).toMatch(/retry-after: 1\r\n/);
      expect(r.text).toContain('too many open connections (limit 2)');
      expect(r.error).toBeUndefined();
      expect(r.sentAll).toBe(true);
      expect(r.ended).toBe(true);
      // The refused connection's request was read by no parser: nothing was routed to the backend.
      await new Promise((res) => setTimeout(res, 200));
      expect(up.requests.length).toBe(before);
      expect(routed).toEqual([]);
    } finally {
      for (const s of held) s.destroy();
      await gw.close();
    }
  });

  test(`a flood beyond the cap: at most ${REFUSED_DRAINING_MAX} refused connections drain at once, the others close 1 s after their answer`, async () => {
    const gw = await gateway({ maxConnections: 1, earlyAnswerDrain: { bytes: MiB, ms: 6000 } });
    const held = await busy(gw, 1);
    const u = new URL(gw.url);
    const extra = 6;
    const refused: { socket: net.Socket; closed: boolean; answered: boolean }[] = [];
    try {
      for (let i = 0; i < REFUSED_DRAINING_MAX + extra; i++) {
        // Half-open allowed and silent: the client never ends its side, so only the gateway closes.
        const socket = net.connect({ port: Number(u.port), host: u.hostname, allowHalfOpen: true });
        const c = { socket, closed: false, answered: false };
        socket.on('error', () => undefined);
        socket.on('data', (d: Buffer) => (c.answered ||= d.toString('latin1').startsWith('HTTP/1.1 503')));
        socket.on('close', () => (c.closed = true));
        await new Promise<void>((r) => socket.once('connect', () => r()));
        refused.push(c);
      }
      // The flood's connections are closed about 1 s after their answer, the drained ones only at
      // 6 s. Both got the gateway's FIN with the answer: a byte written now is read by a draining
      // connection and reset by a closed one, so the client's next write fails (it then sees its close).
      await new Promise((r) => setTimeout(r, 2500));
      for (const c of refused) c.socket.write('x');
      await new Promise((r) => setTimeout(r, 200));
      for (const c of refused) c.socket.write('y');
      const until = Date.now() + 2000;
      while (refused.filter((c) => c.closed).length < extra && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(refused.every((c) => c.answered)).toBe(true);
      expect(refused.slice(REFUSED_DRAINING_MAX).every((c) => c.closed)).toBe(true);
      expect(refused.slice(0, REFUSED_DRAINING_MAX).filter((c) => c.closed)).toHaveLength(0);
    } finally {
      for (const c of refused) c.socket.destroy();
      for (const s of held) s.destroy();
      await gw.close();
    }
  });
});
