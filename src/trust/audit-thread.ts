// The main thread's handle on the audit writer's thread (started with the writer): posts batches without waiting, reports
// each batch's result as it comes back, and can block until everything posted is written (a
// synchronous flush at shutdown, in the process's exit handler, or when a test reads the file).
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { packEntries, type AuditEntry } from './audit-record.js';
import type { AppendResult } from './audit-append.js';
import type { AuditWorkerData } from './audit-worker.js';

/** How long a synchronous flush waits for the thread before counting what is left as lost. */
const DRAIN_MS = 15_000;

/**
 * Records posted and not yet written beyond which posting waits for the thread: the thread runs at
 * background priority, and under sustained load the calls must slow down rather than the queue
 * grow without bound.
 */
const MAX_BEHIND = 16_384;

interface Running {
  worker: Worker;
  port: MessagePort;
  done: Int32Array;
  /** Batches posted to this worker. */
  sent: number;
  /** The call ids of each batch posted and not yet reported, oldest first. */
  pending: string[][];
  /** How many records those batches hold. */
  behind: number;
}

export class AuditThread {
  private running: Running | undefined;

  constructor(
    private readonly path: string,
    /** A batch's result, with the call ids of the records it held. */
    private readonly report: (result: AppendResult, callIds: readonly string[]) => void,
  ) {
    // Started now, so its statements are prepared against the tables as they are at start.
    this.running = this.start();
  }

  /** Records posted and not yet reported written or lost (the write lag, in records). */
  get behind(): number {
    return this.running?.behind ?? 0;
  }

  /** Hands a batch to the thread (a new one if the last died); its result is reported later. */
  post(batch: AuditEntry[]): void {
    const r = (this.running ??= this.start());
    r.sent++;
    r.pending.push(batch.map((e) => e.callId));
    r.behind += batch.length;
    r.port.postMessage(packEntries(batch));
    if (r.behind > MAX_BEHIND) this.drain();
  }

  /** Blocks until every batch posted is written and reported; false if the thread did not finish. */
  drain(timeoutMs = DRAIN_MS): boolean {
    const r = this.running;
    if (!r) return true;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const finished = Atomics.load(r.done, 0);
      if (finished >= r.sent) break;
      const left = deadline - Date.now();
      if (left <= 0) {
        this.abandon(r, `the audit thread did not finish within ${timeoutMs} ms`);
        return false;
      }
      Atomics.wait(r.done, 0, finished, left);
    }
    // The results are on the port already (posted before the counter moved): take them now.
    for (let m = receiveMessageOnPort(r.port); m; m = receiveMessageOnPort(r.port)) {
      this.take(r, m.message as AppendResult);
    }
    return true;
  }

  /** Writes what was posted, closes the thread's connection, then stops the thread. */
  close(): void {
    const r = this.running;
    if (!r) return;
    r.sent++;
    r.pending.push([]);
    r.port.postMessage(null);
    this.drain();
    this.running = undefined;
    r.port.close();
    void r.worker.terminate();
  }

  private start(): Running {
    const { port1, port2 } = new MessageChannel();
    const done = new Int32Array(new SharedArrayBuffer(4));
    const data: AuditWorkerData = { path: this.path, port: port2, done };
    const worker = new Worker(new URL('./audit-worker.js', import.meta.url), {
      workerData: data,
      transferList: [port2],
      // Not the process's flags: under `node -e` they would make the thread run that script too.
      execArgv: [],
    });
    const r: Running = { worker, port: port1, done, sent: 0, pending: [], behind: 0 };
    port1.on('message', (result: AppendResult) => this.take(r, result));
    // Neither keeps the process alive: what is queued at exit is written by the exit handler.
    port1.unref();
    worker.unref();
    worker.on('error', (err) => this.abandon(r, err.message));
    worker.on('exit', (code) => this.abandon(r, `the audit thread exited (code ${code})`));
    return r;
  }

  private take(r: Running, result: AppendResult): void {
    const callIds = r.pending.shift() ?? [];
    r.behind -= callIds.length;
    this.report(result, callIds);
  }

  /** The thread is gone: what it had not written is reported lost; the next batch starts another. */
  private abandon(r: Running, error: string): void {
    if (this.running === r) this.running = undefined;
    const lost = r.pending.flat();
    r.pending = [];
    r.behind = 0;
    if (lost.length) this.report({ failed: lost, error }, lost);
    r.port.close();
    void r.worker.terminate();
  }
}
