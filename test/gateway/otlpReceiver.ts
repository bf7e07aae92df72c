/**
 * A minimal OTLP/HTTP receiver for the gateway telemetry tests (test/gateway/telemetry.test.ts,
 * and the installed package in test/package/package.test.ts): node http on 127.0.0.1, records
 * every POST, answers 200 `{}`; `spansOf` reads the spans of the http/json trace exports.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

type Json = Record<string, unknown>;

export interface Receiver {
  url: string;
  posts: { path: string; contentType: string; body: Buffer }[];
  close(): Promise<void>;
}

/** A minimal OTLP/HTTP receiver: records every POST, answers 200 `{}`. */
export async function startReceiver(): Promise<Receiver> {
  const posts: Receiver['posts'] = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      posts.push({ path: req.url ?? '', contentType: String(req.headers['content-type'] ?? ''), body: Buffer.concat(parts) });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    posts,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: Json }[];
  events?: { name: string; timeUnixNano: string; attributes?: { key: string; value: Json }[] }[];
}

export function spansOf(posts: Receiver['posts']): OtlpSpan[] {
  const spans: OtlpSpan[] = [];
  for (const p of posts.filter((x) => x.path === '/v1/traces')) {
    const req = JSON.parse(p.body.toString('utf8')) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
    for (const rs of req.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
  }
  return spans;
}
