// One message to a remote A2A agent, followed to where its task stops (done, failed, or waiting
// for an answer), and a stopped task read as an MCP tool result.
import {
  TaskState,
  type Message,
  type SendMessageRequest,
  type StreamResponse,
  type Task,
} from '@a2a-js/sdk';
import { cancelUnstarted } from './agent-cancel.js';
import { inOwnContext, sendAndPoll, sendRequest, type AgentLink } from './agent-poll.js';
import { TERMINAL } from './agent-wait.js';
import { partsBytes, partsToResult, textOf, textPart } from './parts.js';

type Json = Record<string, unknown>;

/**
 * Sends one message and follows it to a final or interrupted state: over the SSE stream when the
 * card says the agent streams (status text becomes progress). An agent that does not stream is
 * sent a call's first message to return at once and its task is read until it stops
 * (agent-poll.ts); an answer on a task already known (its id set) is one blocking send.
 */
export async function exchange(
  to: AgentLink,
  message: Message,
  signal: AbortSignal,
  progress: (text: string, n: number) => void,
  started: (task: Task) => void,
): Promise<{ message: Message } | { task: Task }> {
  if (!to.card.capabilities?.streaming) {
    if (!message.taskId) return sendAndPoll(to, message, signal, progress, started);
    // Its task is known: a cancel reaches it by id whenever it comes.
    const sent = await to.client.sendMessage(sendRequest(message), { signal });
    return 'messageId' in sent ? { message: sent } : { task: sent };
  }
  // A context of the call's own, so a cancel before the stream's first event still finds the task.
  const own = inOwnContext(message);
  let task: Task | undefined;
  try {
    return await follow(to, sendRequest(own), signal, progress, (t) => {
      task = t;
      started(t);
    });
  } catch (err) {
    if (signal.aborted && task === undefined) void cancelUnstarted(to, own.contextId);
    throw err;
  }
}

/** Follows one message's stream to a final or interrupted state. */
async function follow(
  to: AgentLink,
  request: SendMessageRequest,
  signal: AbortSignal,
  progress: (text: string, n: number) => void,
  started: (task: Task) => void,
): Promise<{ message: Message } | { task: Task }> {
  let task: Task | undefined;
  let n = 0;
  /** What the task's artifacts add up to: each update is within the limit, their sum must be too. */
  let gathered = 0;
  for await (const event of to.client.sendMessageStream(request, { signal })) {
    const p = (event as StreamResponse).payload;
    if (!p) continue;
    if (p.$case === 'message') return { message: p.value };
    if (p.$case === 'task') {
      task = p.value;
      started(task);
    } else if (p.$case === 'statusUpdate' && task) {
      task = { ...task, status: p.value.status };
      const text = textOf(p.value.status?.message);
      if (text && p.value.status?.state === TaskState.TASK_STATE_WORKING) progress(text, ++n);
    } else if (p.$case === 'artifactUpdate' && task && p.value.artifact) {
      const artifact = p.value.artifact;
      gathered += partsBytes(artifact.parts);
      // Leaving the loop ends the stream; the call fails as when the agent is lost mid-call.
      if (gathered > to.maxMessageBytes)
        throw new Error(
          `agent ${to.agent} streamed artifacts of more than ${to.maxMessageBytes} bytes for one task (limits.maxMessageBytes)`,
        );
      const others = task.artifacts.filter((a) => a.artifactId !== artifact.artifactId);
      const before = task.artifacts.find((a) => a.artifactId === artifact.artifactId);
      const merged =
        p.value.append && before ? { ...before, parts: [...before.parts, ...artifact.parts] } : artifact;
      task = { ...task, artifacts: [...others, merged] };
    }
    // A follow-up's stream opens with the task as it was (input-required): only what comes after
    // it says the task stopped again; the agent ends the stream there too.
    const state = task?.status?.state;
    const stops = p.$case === 'statusUpdate' && state === TaskState.TASK_STATE_INPUT_REQUIRED;
    if (state !== undefined && (TERMINAL.has(state) || stops)) break;
  }
  if (!task) throw new Error(`agent ${to.agent} ended its stream without a task or message`);
  return { task };
}

/** A task in its final (or an unanswerable) state as a tool result. */
export function taskResult(task: Task): Json {
  const state = task.status?.state;
  const parts = task.artifacts.flatMap((a) => a.parts);
  if (state === TaskState.TASK_STATE_COMPLETED) {
    return partsToResult(parts.length ? parts : (task.status?.message?.parts ?? []));
  }
  const why = textOf(task.status?.message);
  const name = TaskState[state ?? TaskState.TASK_STATE_UNSPECIFIED] ?? 'UNKNOWN';
  const word = name
    .replace(/^TASK_STATE_/, '')
    .toLowerCase()
    .replace('_', '-');
  return partsToResult([textPart(`The agent's task ended ${word}${why ? `: ${why}` : ''}`), ...parts], true);
}
