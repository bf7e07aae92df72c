/**
 * The gateway's text path in one process, without sockets: a 100k-chunk OpenAI-chat text flood
 * through the real decode → control → sink stages (src/gateway/exchange/{decode,control,sink}.ts)
 * for each inbound API, the backend response and the client response replaced by two small
 * stand-ins: the backend emits one `data` event per chunk, `--per-read` of them in one synchronous
 * burst (what Node's HTTP client does for one socket read of a chunked body), then yields; the client
 * `write` encodes a string to UTF-8 as a socket would (a buffer is written as it is, not copied) and
 * counts the writes. CPU of this process per upstream chunk (`process.cpuUsage`), median over rounds.
 *
 * With `--baseline <git-ref>` the same stages of that commit's build (bench/baseline.ts) run beside
 * this tree's, alternating round by round, so machine load hits both alike: read the ratio.
 *
 * Run: `npx ts-node -T bench/textPath.ts [--chunks 100000] [--per-read 400] [--rounds 5]
 * [--baseline <git-ref>] [--apis messages,responses,chat]`. It measures what whole-process runs (bench/gatewayInbound.ts) cannot
 * separate from socket and scheduler noise on a shared machine; those stay the goal's measure.
 */
import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import { baselineDist, baselineModule } from './baseline';
import { chatChunk } from '../src/gateway/scripted';

type Api = 'messages' | 'responses' | 'chat';
const ALL_APIS: readonly Api[] = ['messages', 'responses', 'chat'];

/** The modules one side needs, from this tree or a built baseline. */
interface Side {
  name: string;
  apis: Record<Api, unknown>;
  // The stage functions are called with stand-in objects: their exact types differ between builds.
  /* eslint-disable @typescript-eslint/no-explicit-any -- loaded from another build by path; shapes are duck-typed stand-ins */
  Turn: new (x: any, sink: any) => unknown;
  clientSink: (x: any) => { commit(): void; close(): number; settled?(): Promise<void> };
  decodeUpstream: (x: any, upRes: any, turn: any, sink: any) => Promise<void>;
  createStreamReader: (format: string) => unknown;
  Logger: new (level: string) => unknown;
  NOOP_OBSERVER: { start(info: any): unknown };
  /* eslint-enable @typescript-eslint/no-explicit-any */
}

function load(name: string, req: <T>(m: string) => T): Side {
  const control = req<{ Turn: Side['Turn'] }>('src/gateway/exchange/control');
  return {
    name,
    apis: {
      messages: req<{ messagesApi: unknown }>('src/gateway/inbound/messages').messagesApi,
      responses: req<{ responsesApi: unknown }>('src/gateway/inbound/responses').responsesApi,
      chat: req<{ chatApi: unknown }>('src/gateway/inbound/chat').chatApi,
    },
    Turn: control.Turn,
    clientSink: req<{ clientSink: Side['clientSink'] }>('src/gateway/exchange/sink').clientSink,
    decodeUpstream: req<{ decodeUpstream: Side['decodeUpstream'] }>('src/gateway/exchange/decode').decodeUpstream,
    createStreamReader: req<{ createStreamReader: Side['createStreamReader'] }>('src/wire/index').createStreamReader,
    Logger: req<{ Logger: Side['Logger'] }>('src/gateway/log').Logger,
    NOOP_OBSERVER: req<{ NOOP_OBSERVER: Side['NOOP_OBSERVER'] }>('src/gateway/observer').NOOP_OBSERVER,
  };
}

function floodFrames(chunks: number): Buffer[] {
  const frames = [Buffer.from(`data: ${JSON.stringify(chatChunk({ content: '' }))}\n\n`)];
  for (let k = 0; k < chunks; k++) frames.push(Buffer.from(`data: ${JSON.stringify(chatChunk({ content: `word${k} ` }))}\n\n`));
  frames.push(Buffer.from(`data: ${JSON.stringify(chatChunk({ finish: 'stop' }))}\n\n`), Buffer.from('data: [DONE]\n\n'));
  return frames;
}

/** One request through the side's stages; returns the client writes and bytes. */
async function once(side: Side, api: Api, frames: Buffer[], perRead: number): Promise<{ writes: number; bytes: number }> {
  let writes = 0;
  let bytes = 0;
  const upRes = Object.assign(new EventEmitter(), {
    headers: { 'content-type': 'text/event-stream' },
    complete: false,
    pause: () => undefined,
    resume: () => undefined,
    destroy: () => undefined,
  });
  const res = Object.assign(new EventEmitter(), {
    destroyed: false,
    writableFinished: false,
    writeHead: () => undefined,
    cork: () => undefined,
    uncork: () => undefined,
    write: (data: string | Buffer) => {
      writes++;
      // As a socket: a string is encoded once (into storage of its own), a buffer is written as it is.
      bytes += typeof data === 'string' ? scratch(data.length * 3).write(data) : data.length;
      return true;
    },
    end: () => {
      res.writableFinished = true;
    },
  });
  const ctx = {
    newReader: () => side.createStreamReader('openai-chat'),
    wire: 'openai-chat',
    idleTimeoutMs: 1e9,
    pingIntervalMs: 0,
    toolUseOnStop: false,
    malformedCalls: 'pass',
    maxBodyBytes: 1e9,
    logger: new side.Logger('silent'),
    closing: () => false,
    upstreamFormat: {},
  };
  const x = {
    ctx,
    api: side.apis[api],
    req: {},
    res,
    reqId: 'bench',
    t0: performance.now(),
    ac: new AbortController(),
    creq: { model: 'm', stream: true, tools: [] },
    upstreamModel: 'm',
    estimate: 10,
    // The request's facts (the release arm: absent means early); older builds ignore it.
    info: {},
    obs: side.NOOP_OBSERVER.start({}),
    logBase: {},
    stats: { toolUses: 0, malformed: 0, warnings: 0 },
    clientGone: false,
    shutdownEnded: false,
  };
  const sink = side.clientSink(x);
  const turn = new side.Turn(x, sink);
  sink.commit();
  const done = side.decodeUpstream(x, upRes, turn, sink);
  for (let i = 0; i < frames.length; i += perRead) {
    const end = Math.min(frames.length, i + perRead);
    for (let j = i; j < end; j++) upRes.emit('data', frames[j]);
    await new Promise((r) => setImmediate(r));
  }
  upRes.emit('end');
  await done;
  await sink.settled?.(); // as src/gateway/exchange.ts: held pieces are written before the end
  sink.close();
  return { writes, bytes };
}

let scratchBuf = Buffer.alloc(0);
/** Reused storage for the stand-in socket's string writes. */
function scratch(bytes: number): Buffer {
  if (scratchBuf.length < bytes) scratchBuf = Buffer.allocUnsafe(bytes);
  return scratchBuf;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const opt = (name: string, def: number): number => {
    const i = argv.indexOf(name);
    return i >= 0 ? Number(argv[i + 1]) : def;
  };
  const chunks = opt('--chunks', 100_000);
  const perRead = opt('--per-read', 400);
  const rounds = opt('--rounds', 5);
  const bi = argv.indexOf('--baseline');
  // `--apis responses` (comma list) runs only those routes, e.g. under `node --cpu-prof`.
  const ai = argv.indexOf('--apis');
  const APIS = ai >= 0 ? ALL_APIS.filter((a) => (argv[ai + 1] ?? '').split(',').includes(a)) : ALL_APIS;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- this tree's modules, loaded like the baseline's
  const sides: Side[] = [load('now', <T>(m: string) => require(`../${m}`) as T)];
  if (bi >= 0) {
    const dist = await baselineDist(argv[bi + 1] ?? '', (s) => process.stderr.write(s + '\n'));
    sides.push(load(argv[bi + 1] ?? 'baseline', <T>(m: string) => baselineModule<T>(dist, m)));
  }
  const frames = floodFrames(chunks);
  const cpu: Record<string, number[]> = {};
  const writes: Record<string, number> = {};
  for (const side of sides) for (const api of APIS) await once(side, api, frames, perRead); // warm-up
  for (let r = 0; r < rounds; r++) {
    for (const api of APIS) {
      // Odd rounds run the sides the other way round: the one that runs second pays the first one's GC debt.
      for (const side of r % 2 === 0 ? sides : [...sides].reverse()) {
        const c0 = process.cpuUsage();
        const w = await once(side, api, frames, perRead);
        const c = process.cpuUsage(c0);
        (cpu[`${side.name} ${api}`] ??= []).push((c.user + c.system) / frames.length);
        writes[`${side.name} ${api}`] = w.writes;
      }
    }
  }
  const rows = ['| side | inbound API | µs/chunk (median) | client writes |', '|---|---|---:|---:|'];
  for (const api of APIS) for (const side of sides) rows.push(`| ${side.name} | ${api} | ${median(cpu[`${side.name} ${api}`]!).toFixed(2)} | ${writes[`${side.name} ${api}`]} |`);
  if (sides.length === 2) {
    rows.push('', '| inbound API | now ÷ baseline |', '|---|---:|');
    for (const api of APIS) rows.push(`| ${api} | × ${(median(cpu[`now ${api}`]!) / median(cpu[`${sides[1]!.name} ${api}`]!)).toFixed(2)} |`);
  }
  if (APIS.includes('messages') && APIS.includes('responses')) {
    rows.push('', '| side | responses ÷ messages |', '|---|---:|');
    for (const side of sides) rows.push(`| ${side.name} | × ${(median(cpu[`${side.name} responses`]!) / median(cpu[`${side.name} messages`]!)).toFixed(2)} |`);
  }
  const os = await import('node:os');
  console.log(`${frames.length} upstream chunks per request, ${perRead} per read, ${rounds} rounds; load ${os.loadavg()[0]!.toFixed(1)}\n\n${rows.join('\n')}`);
}

void main();
