// Which caller owns which task, on disk (the state database), so that a restart does not orphan
// the tasks hosts are polling: the task table writes each change through and reads them back at
// start. Only tasks of backends that outlive switchboard are kept (a stdio backend is its child and
// is started again empty), each under the backend's origin (its URL), so a switchboard with another
// configuration sharing the file never takes another's task for one of its own.
import { migrate, type StateDb } from '../state/state-db.js';
import type { TaskEntry } from './task-table.js';

const STEPS = [
  `CREATE TABLE tasks (
    exposed TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    origin TEXT NOT NULL,
    task_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    session_key TEXT NOT NULL,
    method TEXT NOT NULL,
    subject TEXT NOT NULL,
    expires_at INTEGER,
    progress_token TEXT,
    created_seq INTEGER NOT NULL
  );
  CREATE INDEX tasks_expires ON tasks (expires_at);`,
];

interface Row {
  exposed: string;
  backend: string;
  origin: string;
  task_id: string;
  owner: string;
  session_key: string;
  method: string;
  subject: string;
  expires_at: number | null;
  progress_token: string | null;
}

export class TaskStore {
  private readonly put;
  private readonly expiry;
  private readonly del;
  private seq: number;

  constructor(
    private readonly db: StateDb,
    /** Where a backend's tasks live if they outlive switchboard (its URL); undefined: they do not. */
    private readonly originOf: (backend: string) => string | undefined,
  ) {
    migrate(db, 'tasks', STEPS);
    this.put = db.prepare(
      `INSERT OR REPLACE INTO tasks (exposed, backend, origin, task_id, owner, session_key, method, subject, expires_at, progress_token, created_seq)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.expiry = db.prepare('UPDATE tasks SET expires_at = ? WHERE exposed = ?');
    this.del = db.prepare('DELETE FROM tasks WHERE exposed = ?');
    this.seq = (db.prepare('SELECT MAX(created_seq) AS m FROM tasks').get() as { m: number | null }).m ?? 0;
  }

  /**
   * Every task still current at `now` whose backend is still where it was, oldest first. Expired
   * ones are dropped from the file; others' (another configuration's) are left alone.
   */
  load(now: number): [string, TaskEntry][] {
    this.db.prepare('DELETE FROM tasks WHERE expires_at IS NOT NULL AND expires_at <= ?').run(now);
    const rows = this.db.prepare('SELECT * FROM tasks ORDER BY created_seq').all() as Row[];
    const ours = rows.filter((r) => this.originOf(r.backend) === r.origin);
    return ours.map((r) => [
      r.exposed,
      {
        backend: r.backend,
        taskId: r.task_id,
        owner: r.owner,
        sessionKey: r.session_key,
        method: r.method,
        subject: r.subject,
        expiresAt: r.expires_at ?? Number.POSITIVE_INFINITY,
        progressToken: r.progress_token === null ? undefined : (JSON.parse(r.progress_token) as unknown),
      },
    ]);
  }

  save(exposed: string, e: TaskEntry): void {
    const origin = this.originOf(e.backend);
    // A backend's late word after switchboard stopped, or a task that ends with switchboard.
    if (!this.db.open || origin === undefined) return;
    this.put.run(
      exposed,
      e.backend,
      origin,
      e.taskId,
      e.owner,
      e.sessionKey,
      e.method,
      e.subject,
      finite(e.expiresAt),
      e.progressToken === undefined ? null : JSON.stringify(e.progressToken),
      ++this.seq,
    );
  }

  expires(exposed: string, at: number): void {
    if (!this.db.open) return;
    this.expiry.run(finite(at), exposed);
  }

  remove(exposed: string): void {
    if (!this.db.open) return;
    this.del.run(exposed);
  }
}

const finite = (at: number): number | null => (Number.isFinite(at) ? Math.round(at) : null);
