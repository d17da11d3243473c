// Task ownership several nodes share (the mesh's JetStream state): which caller owns a task another
// node handed out, so a host that comes to this node with a task id another node gave it (that node
// lost, say) is answered here, and still only that host. The table looks here after its own tasks.
import type { TaskEntry } from './task-table.js';

export interface SharedTaskOwners {
  /** A task by its exposed id as the mesh's shared state holds it (a copy kept current), if any. */
  get(exposed: string): TaskEntry | undefined;
}
