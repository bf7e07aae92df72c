/**
 * node:crypto, loaded on first use instead of when sluice is loaded. Loading it costs a few ms of a
 * cold start (it pulls in Node's crypto, stream and net internals), and a program that imports
 * `runTurn` needs it only for a journal with a MAC key (src/journal/mac.ts, check.ts); the gateway
 * needs it for message ids (src/encode). `process.getBuiltinModule` works the same from the ESM
 * and CommonJS builds and inside users' bundles (no `require`); Node 20 before 20.16 lacks it and
 * gets the builtin through `createRequire` (any absolute path resolves a builtin).
 */
import { createRequire } from 'node:module';
import type * as NodeCrypto from 'node:crypto';

type Crypto = typeof NodeCrypto;
let loaded: Crypto | undefined;

export function nodeCrypto(): Crypto {
  return (loaded ??= load());
}

function load(): Crypto {
  const getBuiltin = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  return (getBuiltin?.('node:crypto') ?? createRequire('/')('node:crypto')) as Crypto;
}
