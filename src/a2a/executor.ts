// The A2A SDK's AgentExecutor for switchboard as an agent: a new message starts a task that calls
// the skill it names (see skill-call.ts); a message to a task waiting on a question answers it;
// tasks/cancel cancels the task's call. Each A2A request returns at the task's next stop.
import {
  AgentEvent,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { TaskState, type Task } from '@a2a-js/sdk';
import type { Caller } from '../call/context.js';
import { messageOf, textPart } from './parts.js';
import { skillCallOf } from './skill-call.js';
import { SkillRun, type RunCall } from './skill-run.js';

/** Where the request's caller is kept in the SDK's call context (set by the front, read here). */
export const CALLER_STATE = 'switchboard.caller';

export class SkillExecutor implements AgentExecutor {
  /** Tasks whose call is running, by task id (ids are random; the SDK scopes them by owner first). */
  private readonly runs = new Map<string, SkillRun>();

  constructor(private readonly call: RunCall) {}

  execute = async (request: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId, userMessage } = request;
    const existing = this.runs.get(taskId);
    if (request.task) {
      // A follow-up to a task of ours: the first event must be the task.
      bus.publish(AgentEvent.task(request.task));
      if (!existing) return;
      existing.attach(bus);
      if (existing.waitingForAnswer) existing.answered(userMessage);
      await existing.untilStop();
      return;
    }
    const caller = request.context.state.get(CALLER_STATE) as Caller | undefined;
    const call = skillCallOf(userMessage, request.request.metadata);
    const task = newTask(taskId, contextId, userMessage);
    if (!caller || 'problem' in call) {
      const why = 'problem' in call ? call.problem : 'No caller';
      bus.publish(
        AgentEvent.task({
          ...task,
          status: {
            state: TaskState.TASK_STATE_REJECTED,
            message: messageOf('agent', [textPart(why)], { taskId, contextId }),
            timestamp: new Date().toISOString(),
          },
        }),
      );
      return;
    }
    bus.publish(AgentEvent.task(task));
    const run = new SkillRun(taskId, contextId, bus);
    this.runs.set(taskId, run);
    void run.run(caller, this.call, call.skill, call.arguments).finally(() => this.runs.delete(taskId));
    await run.untilStop();
  };

  cancelTask = (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    this.runs.get(taskId)?.cancel(bus);
    this.runs.delete(taskId);
    return Promise.resolve();
  };
}

function newTask(id: string, contextId: string, message: RequestContext['userMessage']): Task {
  return {
    id,
    contextId,
    status: {
      state: TaskState.TASK_STATE_SUBMITTED,
      message: undefined,
      timestamp: new Date().toISOString(),
    },
    artifacts: [],
    history: [message],
    metadata: undefined,
  };
}
