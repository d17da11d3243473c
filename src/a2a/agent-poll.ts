// The first message of a call to a remote A2A agent that does not stream. Sent as one blocking
// request, its task's id would come only with the answer, when the task is over or waiting: a
// host's cancel before then could not reach the task, which ran to its end. So it is sent to
// return at once (SendMessageConfiguration.returnImmediately) and its task is read (GetTask) until
// it stops; a cancel then reaches it by id. An agent that answers late anyway (one that ignores
// returnImmediately, or is slow to make its task) is not waited for by a host that cancelled: its
// answer is still read, and the task it names cancelled then.
import { setTimeout as sleep } from 'node:timers/promises';
import { TaskState, type AgentCard, type Message, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { TERMINAL, abortable, stopped } from './agent-wait.js';
import { textOf } from './parts.js';

/** One remote agent as the exchanges see it. */
export interface AgentLink {
  client: Client;
  card: AgentCard;
  agent: string;
  /** Aborts when the channel closes: what still runs for the agent (a late answer) stops then. */
  closed: AbortSignal;
}

/** How often a task is read: soon after it starts, then less often, at most every MAX_POLL_MS. */
const FIRST_POLL_MS = 100;
const MAX_POLL_MS = 2000;
/** How long an answer that came after the host cancelled is still waited for, to cancel its task. */
const LATE_ANSWER_MS = 10 * 60_000;

export async function sendAndPoll(
  to: AgentLink,
  message: Message,
  signal: AbortSignal,
  progress: (text: string, n: number) => void,
  started: (task: Task) => void,
): Promise<{ message: Message } | { task: Task }> {
  const request = {
    tenant: '',
    message,
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      historyLength: undefined,
      returnImmediately: true,
    },
    metadata: undefined,
  };
  // Not under the host's signal: an answer that comes after a cancel still names the task.
  const answer = to.client.sendMessage(request, {
    signal: AbortSignal.any([to.closed, AbortSignal.timeout(LATE_ANSWER_MS)]),
  });
  let first: Message | Task;
  try {
    first = await abortable(answer, signal);
  } catch (err) {
    if (signal.aborted) cancelWhenAnswered(to, answer);
    throw err;
  }
  if ('messageId' in first) return { message: first };
  started(first);
  let task = first;
  let n = 0;
  let said = '';
  for (let wait = FIRST_POLL_MS; ; wait = Math.min(wait * 2, MAX_POLL_MS)) {
    // Each new status of a working task (a new message) is progress, as a stream's would be.
    const status = task.status?.message;
    if (task.status?.state === TaskState.TASK_STATE_WORKING && status && status.messageId !== said) {
      said = status.messageId;
      const text = textOf(status);
      if (text) progress(text, ++n);
    }
    if (stopped(task)) return { task };
    await sleep(wait, undefined, { signal });
    task = await to.client.getTask({ tenant: '', id: task.id, historyLength: 0 }, { signal });
  }
}

/** Cancels the task a late answer names, unless it is over already. */
function cancelWhenAnswered(to: AgentLink, answer: Promise<Message | Task>): void {
  void answer
    .then(async (late) => {
      const state = 'messageId' in late ? undefined : late.status?.state;
      if ('messageId' in late || (state !== undefined && TERMINAL.has(state))) return;
      await to.client.cancelTask({ tenant: '', id: late.id, metadata: undefined });
    })
    .catch(() => {});
}
