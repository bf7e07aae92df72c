/**
 * Lease rules shared by the stores (docs/durability.md "Leases"):
 *
 * - A lease records its holder's host identity and pid next to the owner and expiry.
 * - A holder on THIS host whose process is gone (`process.kill(pid, 0)` → ESRCH) loses the lease
 *   at once: a killed resumer does not block the turn for the TTL.
 * - A holder on another host is trusted until the lease expires (its pid means nothing here): a
 *   dead worker on another machine blocks the turn for at most the TTL.
 * - The TTL is `leaseMs` (option) or `SLUICE_LEASE_TTL_MS` (env), default 60 s; a holder renews
 *   it every TTL/3 while it works.
 *
 * The host identity is the host name plus the pid namespace (`/proc/self/ns/pid` where it
 * exists): two containers that share a host name but not a pid namespace are different hosts,
 * so one never judges the other's pids.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { JournalError } from './records';

export const DEFAULT_LEASE_TTL_MS = 60_000;

let identity: string | undefined;

/** This process's host identity as recorded in leases. */
export function hostIdentity(): string {
  if (identity === undefined) {
    let ns = '';
    try {
      ns = fs.readlinkSync('/proc/self/ns/pid'); // e.g. 'pid:[4026531836]'
    } catch {
      /* not Linux, or no /proc: the host name alone */
    }
    identity = ns ? `${os.hostname()}/${ns}` : os.hostname();
  }
  return identity;
}

/** The holder ran on this host and its process no longer exists. */
export function holderIsDead(host: string, pid: number): boolean {
  if (host !== hostIdentity() || !Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** The lease TTL: the option, else `SLUICE_LEASE_TTL_MS`, else 60 s. Misconfiguration throws (one line). */
export function leaseTtlMs(option?: number, env: NodeJS.ProcessEnv = process.env): number {
  if (option !== undefined) {
    if (!(Number.isFinite(option) && option >= 100)) throw new JournalError(`leaseMs must be a number of ms ≥ 100 (got ${String(option)})`, 'config');
    return option;
  }
  const raw = env.SLUICE_LEASE_TTL_MS;
  if (raw === undefined || raw === '') return DEFAULT_LEASE_TTL_MS;
  const v = Number(raw);
  if (!(Number.isFinite(v) && v >= 100)) throw new JournalError(`SLUICE_LEASE_TTL_MS must be a number of ms ≥ 100 (got "${raw.slice(0, 40)}")`, 'config');
  return v;
}
