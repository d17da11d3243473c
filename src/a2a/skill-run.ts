// One A2A task of switchboard as an agent: one tools/call through the pipeline as the agent's call,
// its progress as working status updates, its questions (a backend's elicitation, an approval
// prompt) as input-required turns the agent's next message answers, its result as an artifact.
import { randomUUID } from 'node:crypto';
import { AgentEvent, type ExecutionEventBus } from '@a2a-js/sdk/server';
import { TaskState, type Message, type Part } from '@a2a-js/sdk';
import type { Caller, CallContext, Reply } from '../call/context.js';
import { newCall } from '../call/new-call.js';
import { toWire, WIRE, WireError } from '../errors/errors.js';
import type { Params } from '../jsonrpc/message.js';
import { messageOf, resultToParts, textPart } from './parts.js';
import { answerOf, questionParts } from './questions.js';
import { plain } from '../encoding/raw-text.js';

/** The one door an A2A task's call takes into the pipeline. */
export type RunCall = (ctx: CallContext) => Promise<void>;

interface Question {
  params: Params;
  answer(result: Record<string, unknown>): void;
  fail(err: Error): void;
}

export class SkillRun {
  private readonly abort = new AbortController();
  private question: Question | undefined;
  /** Resolves at the run's next stop: a question asked, or its end. */
  private stop!: () => void;
  private stopped!: Promise<void>;
  private finished = false;

  constructor(
    readonly taskId: string,
    readonly contextId: string,
    private bus: ExecutionEventBus,
  ) {
    this.nextStop();
  }

  private nextStop(): void {
    this.stopped = new Promise<void>((resolve) => (this.stop = resolve));
  }

  /** Waits until the task is interrupted (a question) or over: what one A2A request waits for. */
  untilStop(): Promise<void> {
    return this.stopped;
  }

  get waitingForAnswer(): boolean {
    return this.question !== undefined;
  }

  /** Runs the call; resolves when it is over, whatever became of it. */
  async run(caller: Caller, call: RunCall, skill: string, args: Record<string, unknown>): Promise<void> {
    this.status(TaskState.TASK_STATE_WORKING);
    const ctx = newCall({
      caller,
      method: 'tools/call',
      // A progress token, so that the backend's progress reaches the agent as working updates.
      params: { name: skill, arguments: args, _meta: { progressToken: `a2a-${this.taskId}` } },
      reply: this.reply(caller),
      signal: this.abort.signal,
    });
    try {
      await call(ctx);
      // Read here as text: a large string that came in as bytes is decoded once.
      const result = plain(ctx.result ?? {}) as Record<string, unknown>;
      const parts = resultToParts(result);
      if (parts.length)
        this.publish(
          AgentEvent.artifactUpdate({
            taskId: this.taskId,
            contextId: this.contextId,
            artifact: {
              artifactId: randomUUID(),
              name: skill,
              description: '',
              parts,
              metadata: undefined,
              extensions: [],
            },
            append: false,
            lastChunk: true,
            metadata: undefined,
          }),
        );
      if (result.isError === true) this.end(TaskState.TASK_STATE_FAILED, [textPart(`Tool ${skill} failed`)]);
      else this.end(TaskState.TASK_STATE_COMPLETED);
    } catch (err) {
      const wire = toWire(err);
      this.end(TaskState.TASK_STATE_FAILED, [textPart(wire.message)], { code: wire.code });
    }
  }

  /** The answer in the agent's next message, to the question the task waits on. */
  answered(message: Message): void {
    const q = this.question;
    if (!q) return;
    // Read before the question is let go: what cannot be read leaves it waiting for another answer.
    const answer = answerOf(message, q.params);
    this.question = undefined;
    this.nextStop();
    this.status(TaskState.TASK_STATE_WORKING);
    q.answer(answer);
  }

  /** The agent cancelled the task (tasks/cancel): the call is cancelled through its signal. */
  cancel(bus: ExecutionEventBus): void {
    this.bus = bus;
    this.question?.fail(new WireError(WIRE.INTERNAL_ERROR, 'The A2A task was cancelled'));
    this.question = undefined;
    this.end(TaskState.TASK_STATE_CANCELED, [textPart('Cancelled by the agent')]);
    this.abort.abort(new Error('The A2A task was cancelled'));
  }

  /** Replaces the bus events go to (a follow-up request's; the SDK gives the same one while alive). */
  attach(bus: ExecutionEventBus): void {
    this.bus = bus;
  }

  private reply(caller: Caller): Reply {
    return {
      // One admission share per agent, as a host session has its own.
      sessionKey: `a2a:${caller.kind}:${caller.id}`,
      // Elicitation is what an agent can be asked (input-required); sampling and roots are not.
      capabilities: { elicitation: { form: {}, url: {} } },
      era: 'legacy',
      notify: (method, params) => {
        if (method !== 'notifications/progress' || this.finished) return;
        const text =
          typeof params.message === 'string'
            ? params.message
            : `progress ${String(params.progress)}${params.total !== undefined ? `/${String(params.total)}` : ''}`;
        this.status(TaskState.TASK_STATE_WORKING, [textPart(text)]);
      },
      request: (method, params, signal) => {
        if (method !== 'elicitation/create')
          return Promise.reject(new WireError(WIRE.METHOD_NOT_FOUND, `An A2A agent cannot answer ${method}`));
        return this.ask(params ?? {}, signal);
      },
    };
  }

  private ask(params: Params, signal: AbortSignal): Promise<Record<string, unknown>> {
    if (this.finished) return Promise.reject(new WireError(WIRE.INTERNAL_ERROR, 'The A2A task is over'));
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        if (this.question !== q) return;
        this.question = undefined;
        reject(signal.reason instanceof Error ? signal.reason : new Error('cancelled'));
      };
      const q: Question = {
        params,
        answer: (r) => {
          signal.removeEventListener('abort', onAbort);
          resolve(r);
        },
        fail: (e) => {
          signal.removeEventListener('abort', onAbort);
          reject(e);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.question = q;
      this.status(TaskState.TASK_STATE_INPUT_REQUIRED, questionParts(params));
      this.stop();
    });
  }

  private end(state: TaskState, parts?: Part[], metadata?: Record<string, unknown>): void {
    if (this.finished) return;
    this.status(state, parts, metadata);
    this.finished = true;
    this.stop();
  }

  private status(state: TaskState, parts?: Part[], metadata?: Record<string, unknown>): void {
    if (this.finished) return;
    const message = parts
      ? messageOf('agent', parts, { taskId: this.taskId, contextId: this.contextId })
      : undefined;
    this.publish(
      AgentEvent.statusUpdate({
        taskId: this.taskId,
        contextId: this.contextId,
        status: { state, message, timestamp: new Date().toISOString() },
        metadata,
      }),
    );
  }

  private publish(event: ReturnType<typeof AgentEvent.statusUpdate>): void {
    this.bus.publish(event);
  }
}
