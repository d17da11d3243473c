// The audit writer's thread: hashes and commits the batches the main thread posts, on its own
// SQLite connection, so a commit never stalls the event loop that carries calls. After each batch
// it posts the result, then bumps the shared counter a synchronous flush waits on.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { workerData, type MessagePort } from 'node:worker_threads';
import { unpackEntries, type AuditEntry } from './audit-record.js';
import { chainAppender, type AppendResult } from './audit-append.js';
import { openTrustDb, type TrustDb } from './trust-db.js';

export interface AuditWorkerData {
  path: string;
  port: MessagePort;
  /** [0]: batches finished. */
  done: Int32Array;
}

const { path, port, done } = workerData as AuditWorkerData;

/** Background priority: a thread's nice value, 0 being the process's. */
const NICE = 10;

// Writing the trail is background work: when the CPU is short, the threads carrying calls go first
// and the trail catches up in the gaps (the writer waits for it if it falls far behind). On Linux
// a nice value is per thread; elsewhere, or if the kernel refuses, the thread runs at normal priority.
try {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isInteger(tid) && tid > 0) setPriority(tid, NICE);
} catch {
  // Not Linux, or no /proc: normal priority.
}

let db: TrustDb | undefined;
let append: ((batch: AuditEntry[]) => AppendResult) | undefined;
let openError = '';
try {
  // The main thread created the file and its tables; a table dropped since is an error, not re-made.
  db = openTrustDb(path, { existing: true });
  append = chainAppender(db);
} catch (err) {
  openError = err instanceof Error ? err.message : String(err);
}

/** A batch (packed entries), or null: close the connection, the writer is stopping. */
port.on('message', (packed: unknown[] | null) => {
  if (packed === null) {
    // Closed here rather than dropped with the thread: the last connection to close folds the WAL
    // back into the database file, which a copy of that file alone then holds.
    db?.close();
    append = undefined;
    openError = 'the writer was closed';
    port.postMessage({ failed: [] } satisfies AppendResult);
  } else {
    const batch = unpackEntries(packed);
    const result = append
      ? append(batch)
      : { failed: batch.map((e) => e.callId), error: `cannot write ${path}: ${openError}` };
    port.postMessage(result);
  }
  Atomics.add(done, 0, 1);
  Atomics.notify(done, 0);
});
