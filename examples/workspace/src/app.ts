import { createServer } from 'node:http';
import { parseConfig } from './config';
import { handleOrder } from './orders';
import { elapsed, readOptional } from './util';

const started = performance.now();
const raw = readOptional(process.env.ORDERS_CONFIG ?? 'config.json') ?? '{}';
const config = parseConfig(raw);

const server = createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/orders') {
    handleOrder(req, res, config);
    return;
  }
  res.writeHead(404).end();
});

server.listen(config.port, () => {
  console.log(`orders-service listening on :${config.port} after ${elapsed(started)} ms`);
});
