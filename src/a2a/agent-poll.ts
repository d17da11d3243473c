// The first message of a call to a remote A2A agent that does not stream. Sent as one blocking
// request, its task's id would come only with the answer, when the task is over or waiting: a
// host's cancel before then could not reach the task, which ran to its end. So it is sent to
// return at once (SendMessageConfiguration.returnImmediately), in a context of the call's own
// making, and its task is read (GetTask) until it stops; a cancel then reaches it by id. For an
// agent that has not answered when the host cancels (one that ignores returnImmediately, or is slow
// to make its task) the task is looked up by that context (ListTasks) and cancelled, and the
// request ended. Only when the agent has no such task yet (or cannot list) is its answer still
// waited for, to cancel the task it names: a bounded number per agent, each for a bounded time.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  TaskState,
  type AgentCard,
  type Message,
  type SendMessageConfiguration,
  type SendMessageRequest,
  type Task,
} from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { cancelUnanswered } from './agent-cancel.js';
import { abortable } from '../call/signals.js';
import { stopped } from './agent-wait.js';
import { textOf } from './parts.js';

/** One remote agent as the exchanges see it. */
export interface AgentLink {
  client: Client;
  card: AgentCard;
  agent: string;
  /** Aborts when the channel closes: what still runs for the agent (a late answer) stops then. */
  closed: AbortSignal;
  /** The answers still waited for after their host cancelled. */
  late: LateAnswers;
  /** limits.maxMessageBytes: what one task's streamed artifacts may add up to. */
  maxMessageBytes: number;
}

/** How often a task is read: soon after it starts, then less often, at most every MAX_POLL_MS. */
const FIRST_POLL_MS = 100;
const MAX_POLL_MS = 2000;
/** How many GetTask failures in a row a call outlasts (a dropped connection, a restart). */
const GET_TASK_RETRIES = 3;

/**
 * The answers a channel still waits for after their host cancelled, to cancel the task they name:
 * at most `max` at once (each holds a request open to the agent), each for at most `waitMs` from
 * the cancel. Beyond that an answer is not waited for, and its task, if the agent makes one, runs on.
 */
export class LateAnswers {
  private held = 0;
  constructor(
    readonly max = 8,
    readonly waitMs = 10 * 60_000,
  ) {}

  /** Takes a place, or false when all are taken. */
  take(): boolean {
    if (this.held >= this.max) return false;
    this.held++;
    return true;
  }

  release(): void {
    this.held--;
  }
}

/** A SendMessage request of `message` (on the default tenant). */
export function sendRequest(message: Message, configuration?: SendMessageConfiguration): SendMessageRequest {
  return { tenant: '', message, configuration, metadata: undefined };
}

/**
 * The message in a context of the call's own making unless it names one: after a cancel that
 * comes before the agent names the task, the task is found by it (agent-cancel.ts).
 */
export function inOwnContext(message: Message): Message {
  return message.contextId ? message : { ...message, contextId: randomUUID() };
}

export async function sendAndPoll(
  to: AgentLink,
  message: Message,
  signal: AbortSignal,
  progress: (text: string, n: number) => void,
  started: (task: Task) => void,
): Promise<{ message: Message } | { task: Task }> {
  const own = inOwnContext(message);
  const contextId = own.contextId;
  const request = sendRequest(own, {
    acceptedOutputModes: [],
    taskPushNotificationConfig: undefined,
    historyLength: undefined,
    returnImmediately: true,
  });
  // Not under the host's signal: after a cancel, the answer may be all that names the task.
  const sending = new AbortController();
  const answer = to.client.sendMessage(request, { signal: AbortSignal.any([to.closed, sending.signal]) });
  let first: Message | Task;
  try {
    first = await abortable(answer, signal);
  } catch (err) {
    if (signal.aborted) void cancelUnanswered(to, contextId, answer, sending);
    else sending.abort(err);
    throw err;
  }
  if ('messageId' in first) return { message: first };
  started(first);
  try {
    return await poll(to, first, signal, progress);
  } catch (err) {
    // A cancel is the channel's to pass on; any other failure leaves no one following the task.
    if (!signal.aborted)
      void to.client.cancelTask({ tenant: '', id: first.id, metadata: undefined }).catch(() => {});
    throw err;
  }
}

/** Reads `task` until it stops; each new status of a working task (a new message) is progress. */
async function poll(
  to: AgentLink,
  task: Task,
  signal: AbortSignal,
  progress: (text: string, n: number) => void,
): Promise<{ task: Task }> {
  let n = 0;
  let said = '';
  let failures = 0;
  for (let wait = FIRST_POLL_MS; ; wait = Math.min(wait * 2, MAX_POLL_MS)) {
    const status = task.status?.message;
    if (task.status?.state === TaskState.TASK_STATE_WORKING && status && status.messageId !== said) {
      said = status.messageId;
      const text = textOf(status);
      if (text) progress(text, ++n);
    }
    if (stopped(task)) return { task };
    await sleep(wait, undefined, { signal });
    try {
      task = await to.client.getTask({ tenant: '', id: task.id, historyLength: 0 }, { signal });
      failures = 0;
    } catch (err) {
      if (signal.aborted || ++failures > GET_TASK_RETRIES) throw err;
    }
  }
}
