import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from './config';
import { clamp } from './util';

let windowStart = Date.now();
let count = 0;

export function handleOrder(req: IncomingMessage, res: ServerResponse, config: Config): void {
  const now = Date.now();
  if (now - windowStart > 60_000) {
    windowStart = now;
    count = 0;
  }
  count = clamp(count + 1, 0, Number.MAX_SAFE_INTEGER);
  if (count > config.maxOrdersPerMinute) {
    res.writeHead(429, { 'retry-after': '60' }).end();
    return;
  }
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
  req.on('end', () => {
    res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ accepted: body.length > 0 }));
  });
}
