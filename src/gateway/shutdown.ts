/**
 * Graceful shutdown for the gateway (SIGTERM / SIGINT in `sluice serve`, `gateway.drain()` in the
 * library).
 *
 * 1. Readiness goes false (`/readyz` answers 503) and new model requests get 503 overloaded_error.
 * 2. The listener stops accepting; connections with no request in progress (keep-alive between
 *    requests, never sent one, a half-sent head) are closed at once (server.ts `drain`).
 * 3. Streams in flight run to their end, up to the drain deadline.
 * 4. At the deadline, every stream still running is ended with one well-formed error event
 *    (`overloaded_error`, "the gateway is shutting down") — a non-streaming request gets the same
 *    error as a 529 body — and the backend request is aborted.
 *
 * Each in-flight exchange registers an `end(reason)` callback; `Drain` calls them at the deadline.
 */

export const SHUTDOWN_MESSAGE = 'the gateway is shutting down; retry the request';

/** Default time in-flight streams get to finish after SIGTERM. */
export const DEFAULT_DRAIN_MS = 30_000;

export type EndInFlight = (message: string) => void;

export class Drain {
  private readonly live = new Set<EndInFlight>();
  private readonly idleWaiters = new Set<() => void>();
  private draining_ = false;

  get draining(): boolean {
    return this.draining_;
  }
  get inFlight(): number {
    return this.live.size;
  }

  /** Register an in-flight exchange; call the returned function when it finishes. */
  register(end: EndInFlight): () => void {
    this.live.add(end);
    return () => {
      if (!this.live.delete(end)) return;
      if (this.live.size === 0) for (const w of [...this.idleWaiters]) w();
    };
  }

  /**
   * Start draining: resolves when every registered exchange finished, or at `deadlineMs` after
   * ending the remaining ones with the shutdown error (then waits up to `graceMs` for them to
   * write it). Resolves with the number of exchanges that had to be ended.
   */
  async start(deadlineMs: number, graceMs = 2_000): Promise<number> {
    this.draining_ = true;
    if (this.live.size === 0) return 0;
    const finished = await this.waitIdle(deadlineMs);
    if (finished) return 0;
    const ended = this.live.size;
    for (const end of [...this.live]) {
      try {
        end(SHUTDOWN_MESSAGE);
      } catch {
        // one exchange failing to end must not stop the others
      }
    }
    await this.waitIdle(graceMs);
    return ended;
  }

  private waitIdle(ms: number): Promise<boolean> {
    if (this.live.size === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        this.idleWaiters.delete(onIdle);
        resolve(ok);
      };
      const onIdle = (): void => done(true);
      const timer = setTimeout(() => done(this.live.size === 0), ms);
      this.idleWaiters.add(onIdle);
    });
  }
}
