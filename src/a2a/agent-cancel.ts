// A host's cancel of a call to a remote agent that came before the agent named the call's task.
// Each call's first message carries a context of switchboard's making, so the task is found by
// it (ListTasks) and cancelled; what cannot be found yet is waited for, within LateAnswers' bounds:
// the answer of an agent that does not stream (it names the task), or, for a stream that was cut
// before its first event, the task appearing in that context.
import { setTimeout as sleep } from 'node:timers/promises';
import { TaskState, type Message, type Task } from '@a2a-js/sdk';
import type { AgentLink } from './agent-poll.js';
import { TERMINAL } from './agent-wait.js';

/** How often a cut stream's context is read for its task: soon, then less often. */
const FIRST_LOOK_MS = 100;
const MAX_LOOK_MS = 2000;

/** Cancels the tasks under way in `contextId`; false when the agent lists none (or cannot list). */
async function cancelInContext(to: AgentLink, contextId: string): Promise<boolean> {
  const listed = await to.client
    .listTasks(
      {
        tenant: '',
        contextId,
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 10,
        pageToken: '',
        historyLength: 0,
        statusTimestampAfter: undefined,
        includeArtifacts: false,
      },
      { signal: to.closed },
    )
    .then((r) => r.tasks)
    .catch(() => []);
  const running = listed.filter((t) => t.status?.state === undefined || !TERMINAL.has(t.status.state));
  await Promise.all(running.map((t) => cancel(to, t.id)));
  return listed.length > 0;
}

function cancel(to: AgentLink, id: string): Promise<unknown> {
  return to.client.cancelTask({ tenant: '', id, metadata: undefined }).catch(() => {});
}

/**
 * After a cancel before a non-streaming agent's first answer: the call's task, found by its
 * context, is cancelled and the request ended; else its answer is waited for to cancel the task
 * it names.
 */
export async function cancelUnanswered(
  to: AgentLink,
  contextId: string,
  answer: Promise<Message | Task>,
  sending: AbortController,
): Promise<void> {
  if (await cancelInContext(to, contextId)) return void sending.abort(new Error('cancelled'));
  if (!to.late.take()) return sending.abort(new Error('too many late answers waited for'));
  const timer = setTimeout(() => sending.abort(new Error('no answer in time')), to.late.waitMs);
  try {
    const late = await answer;
    if ('messageId' in late) return;
    if (late.status?.state === undefined || !TERMINAL.has(late.status.state)) await cancel(to, late.id);
  } catch {
    // No answer (the agent failed, or the wait ended): no task to cancel that it named.
  } finally {
    clearTimeout(timer);
    to.late.release();
  }
}

/**
 * After a cancel cut a stream before its first event: the stream is gone, so the context is read
 * until the task appears in it (then cancelled) or the wait ends.
 */
export async function cancelUnstarted(to: AgentLink, contextId: string): Promise<void> {
  if (await cancelInContext(to, contextId)) return;
  if (!to.late.take()) return;
  const until = Date.now() + to.late.waitMs;
  try {
    for (let wait = FIRST_LOOK_MS; Date.now() < until; wait = Math.min(wait * 2, MAX_LOOK_MS)) {
      await sleep(wait, undefined, { signal: to.closed });
      if (await cancelInContext(to, contextId)) return;
    }
  } catch {
    // The channel closed: nothing more is done for the agent.
  } finally {
    to.late.release();
  }
}
