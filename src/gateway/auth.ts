/**
 * Client authentication for the gateway.
 *
 * A gateway bound to loopback needs none (only this machine can reach it). Any other bind needs
 * at least one API key (`--api-key` / `SLUICE_API_KEY`, several separated by commas) unless the
 * operator says `--no-auth` (and is warned). Clients present the key the way Anthropic and
 * OpenAI clients already do: `x-api-key: KEY` or `Authorization: Bearer KEY` (or Gemini's `x-goog-api-key`).
 *
 * Keys are compared in constant time (SHA-256 of both sides, then `timingSafeEqual`, so neither
 * the content nor the length of a key leaks through timing). Keys are never logged; the only
 * thing a log line says is whether auth is on and how many keys there are.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { GatewayError } from './errors';

/** True for addresses only this machine can reach: 127.0.0.0/8, ::1, `localhost`. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  return mapped !== null && mapped[1]!.startsWith('127.');
}

/** A short description of who can reach a bind address (for the startup warning). */
export function exposure(host: string): string {
  const h = host.replace(/^\[|\]$/g, '');
  if (h === '0.0.0.0' || h === '::' || h === '') return 'every network interface of this machine';
  return `the network through ${h}`;
}

export interface AuthConfig {
  /** SHA-256 digests of the accepted keys (the keys themselves are not kept). */
  digests: Buffer[];
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}

/** Keys from a flag/env value: comma-separated, whitespace trimmed, empties dropped. */
export function parseApiKeys(v: string | undefined): string[] {
  if (v === undefined) return [];
  return v
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k.length > 0);
}

/**
 * The auth the gateway runs with. Throws a one-line configuration error when a non-loopback bind
 * has neither keys nor an explicit `noAuth` (`flag` names the bind flag in it, default `--host`;
 * `what` what the bind exposes, default "the gateway"). Returns undefined when no check is needed.
 */
export function resolveAuth(opts: { host: string; apiKeys?: string[]; noAuth?: boolean; flag?: string; what?: string }): AuthConfig | undefined {
  const keys = opts.apiKeys ?? [];
  if (keys.length > 0) return { digests: keys.map(digest) };
  if (opts.noAuth || isLoopback(opts.host)) return undefined;
  throw new Error(
    `${opts.flag ?? '--host'} ${opts.host} exposes ${opts.what ?? 'the gateway'} to ${exposure(opts.host)}: set --api-key (or SLUICE_API_KEY), or pass --no-auth to run without client authentication`,
  );
}

/** The key a client presented: `x-api-key`, else `Authorization: Bearer …`, else `x-goog-api-key` (Gemini clients). */
export function presentedKey(req: IncomingMessage): string | undefined {
  const k = req.headers['x-api-key'];
  if (typeof k === 'string' && k.length > 0) return k;
  const a = req.headers.authorization;
  if (typeof a === 'string') {
    const m = /^Bearer\s+(.+)$/i.exec(a.trim());
    if (m) return m[1];
  }
  const g = req.headers['x-goog-api-key'];
  if (typeof g === 'string' && g.length > 0) return g;
  return undefined;
}

/** Constant-time membership: every configured key is compared, whatever matches first. */
export function keyMatches(auth: AuthConfig, key: string | undefined): boolean {
  if (key === undefined) return false;
  const d = digest(key);
  let ok = false;
  for (const k of auth.digests) ok = timingSafeEqual(d, k) || ok;
  return ok;
}

/** Throws 401 authentication_error (the Anthropic shape) unless the request carries an accepted key. */
export function authenticate(auth: AuthConfig | undefined, req: IncomingMessage): void {
  if (!auth) return;
  const key = presentedKey(req);
  if (keyMatches(auth, key)) return;
  throw new GatewayError(
    401,
    key === undefined ? 'missing API key: send x-api-key or Authorization: Bearer' : 'invalid API key',
    'authentication_error',
  );
}
