// Waiting on a remote A2A agent: which of its task states end a wait (a wait a host's cancel cuts
// short is call/signals.ts abortable).
import { TaskState, type Task } from '@a2a-js/sdk';

/** States after which a task changes no more. */
export const TERMINAL: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

/** Whether the task has stopped: finished, or waiting for input it cannot go on without. */
export function stopped(task: Task): boolean {
  const state = task.status?.state;
  if (state === undefined) return false;
  return (
    TERMINAL.has(state) ||
    state === TaskState.TASK_STATE_INPUT_REQUIRED ||
    state === TaskState.TASK_STATE_AUTH_REQUIRED
  );
}
