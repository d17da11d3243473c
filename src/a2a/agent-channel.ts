// A remote A2A agent as a backend: a Channel that answers switchboard's MCP requests itself (the
// legacy era: initialize, ping, tools/list, tools/call) by reading the agent's card and sending it
// messages with the A2A SDK's client. The agent's skills are the tools; its input-required turns
// into an elicitation/create request on this channel, which switchboard attributes and puts to the
// caller like any backend's question. Everything above the channel (health, restarts, policy,
// approval, audit, redaction) is what every backend gets: nothing else knows this one is A2A.
import { randomUUID } from 'node:crypto';
import { AgentCard, TaskState } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import type { A2ABackendConfig } from '../config/schema.js';
import type { Channel } from '../jsonrpc/channel.js';
import type { Logger } from '../log.js';
import { RELATED_TASK } from '../protocol/versions.js';
import { AgentTasks, type TaskRun } from './agent-tasks.js';
import { exchange, taskResult } from './agent-exchange.js';
import { LateAnswers } from './agent-poll.js';
import { abortable } from '../call/signals.js';
import { messageOf, partsToResult, textOf, textPart } from './parts.js';
import { answerParts, elicitationFor } from './questions.js';
import { firstParts, skillsToTools, type SkillOfTool } from './skill-tools.js';
import { textOf as wireText } from '../encoding/text-of.js';
import { WIRE } from '../errors/errors.js';
import { plain } from '../encoding/raw-text.js';
import { blindJsonError } from '../encoding/json-error.js';

type Json = Record<string, unknown>;
type Id = string | number;
type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

export interface AgentChannelOptions {
  name: string;
  log: Logger;
  /** The fetch every request to the agent goes through (switchboard's guarded outbound fetch). */
  fetch: Fetch & { close?(): void };
  /** limits.maxMessageBytes: each answer is kept to it (by the fetch), and a task's artifacts too. */
  maxMessageBytes: number;
}

export class AgentChannel implements Channel {
  onmessage?: ((message: unknown) => void) | undefined;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  private card: AgentCard | undefined;
  private client: Client | undefined;
  /** Skill (its id, and whether it takes data only) by tool name. */
  private skills = new Map<string, SkillOfTool>();
  private tools: Json[] = [];
  /** tools/call in flight, by request id: cancelled with notifications/cancelled. */
  private readonly running = new Map<Id, AbortController>();
  /** Requests this channel put to switchboard (elicitation), by id. */
  private readonly asking = new Map<Id, (message: Json) => void>();
  /** tools/calls sent as tasks (`params.task`), answered at once and run behind their task. */
  private readonly tasks = new AgentTasks((method, params) =>
    this.deliver({ jsonrpc: '2.0', method, params }),
  );
  private closed = false;
  /** Aborted at close: stops what runs on for the agent after its call ended (agent-poll.ts). */
  private readonly closing = new AbortController();
  /** Answers still waited for after their host cancelled (bounded per agent). */
  private readonly late = new LateAnswers();
  private readonly fetch: Fetch;

  constructor(
    private readonly config: A2ABackendConfig,
    private readonly options: AgentChannelOptions,
  ) {
    // The configured headers (the agent's credentials) ride on every request, the card's too.
    const headers = config.headers;
    this.fetch = (url, init) => {
      const merged = new Headers(init?.headers);
      for (const [k, v] of Object.entries(headers)) merged.set(k, v);
      return options.fetch(url, { ...init, headers: merged });
    };
  }

  async start(): Promise<void> {
    const url = new URL(this.config.cardPath.replace(/^\//, ''), withSlash(this.config.a2a));
    const res = await this.fetch(url, { headers: { accept: 'application/json' } });
    if (!res.ok) throw new Error(`agent card at ${url.origin}${url.pathname}: HTTP ${res.status}`);
    this.card = AgentCard.fromJSON(await res.json());
    const fetchImpl = this.fetch as typeof fetch;
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
      }),
    );
    this.client = await factory.createFromAgentCard(this.card);
    const { tools, skills } = skillsToTools(this.card);
    this.tools = tools;
    this.skills = skills;
    // An agent may show its skills only to a client it knows (switchboard's own card does).
    if (skills.size === 0)
      this.options.log.warn(
        { agent: this.options.name, credentials: Object.keys(this.config.headers).length > 0 },
        'the A2A agent offers no skills: no tools from it (does it want credentials? servers.<name>.headers)',
      );
  }

  async send(message: unknown): Promise<void> {
    // This channel is code in this process: a large string that came in as bytes is text here.
    const m = plain(message) as Json;
    if (typeof m.method !== 'string') {
      // A response to a question this channel asked.
      const waiting = this.asking.get(m.id as Id);
      this.asking.delete(m.id as Id);
      waiting?.(m);
      return;
    }
    if (m.id === undefined) return this.notified(m.method, (m.params ?? {}) as Json);
    const id = m.id as Id;
    void this.answer(m.method, (m.params ?? {}) as Json, id).then(
      (result) => this.deliver({ jsonrpc: '2.0', id, result }),
      (err: unknown) => this.deliver({ jsonrpc: '2.0', id, error: this.errorOf(err) }),
    );
  }

  /**
   * An answer's error: one this channel gives (an unknown tool, a method it lacks) as it is; any
   * other (the agent's connection lost mid-call, a body it could not read) as the agent being
   * unavailable, naming it. Such errors carry no JSON-RPC code, or a library's string code.
   */
  private errorOf(err: unknown): { code: number; message: string } {
    const code = (err as { code?: unknown }).code;
    // A body or stream event the library could not parse: its message would quote the agent's bytes.
    const unparsed = unparsedJson(err);
    const message =
      unparsed !== undefined
        ? blindJsonError(unparsed).message
        : err instanceof Error
          ? err.message
          : String(err);
    if (Number.isInteger(code)) return { code: code as number, message };
    return { code: WIRE.BACKEND_UNAVAILABLE, message: `A2A agent ${this.options.name} failed: ${message}` };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closing.abort(new Error('backend closed'));
    for (const c of this.running.values()) c.abort(new Error('backend closed'));
    this.tasks.close();
    this.options.fetch.close?.();
    this.onclose?.();
  }

  private deliver(message: Json): void {
    if (!this.closed) queueMicrotask(() => this.onmessage?.(message));
  }

  private notified(method: string, params: Json): void {
    if (method === 'notifications/cancelled')
      this.running.get(params.requestId as Id)?.abort(new Error('cancelled'));
  }

  private async answer(method: string, params: Json, id: Id): Promise<Json> {
    switch (method) {
      case 'initialize':
        return {
          protocolVersion: typeof params.protocolVersion === 'string' ? params.protocolVersion : '2025-11-25',
          capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
          serverInfo: { name: this.card!.name, version: this.card!.version || '0.0.0' },
          ...(this.card!.description ? { instructions: this.card!.description } : {}),
        };
      case 'ping':
        return {};
      case 'tools/list':
        return { tools: this.tools };
      case 'tools/call':
        if (typeof params.task === 'object' && params.task !== null)
          return this.tasks.start(params.task, (run) => this.callSkill(params, run.signal, run));
        return this.callCancellable(params, id);
      case 'tasks/get':
        return this.tasks.get(params.taskId);
      case 'tasks/result':
        return this.tasks.result(params.taskId);
      case 'tasks/cancel':
        return this.tasks.cancel(params.taskId);
      case 'tasks/list':
        return this.tasks.list();
      default:
        throw Object.assign(new Error(`Method not found: ${method}`), { code: -32601 });
    }
  }

  /** A plain tools/call, which notifications/cancelled naming its request id stops. */
  private async callCancellable(params: Json, id: Id): Promise<Json> {
    const abort = new AbortController();
    this.running.set(id, abort);
    try {
      return await this.callSkill(params, abort.signal);
    } finally {
      this.running.delete(id);
    }
  }

  /**
   * One tools/call: a message to the agent, its questions put to the caller, until a final state.
   * Run as an MCP task (`run`), its questions and progress carry the task's related-task key and
   * its status says when it waits for an answer.
   */
  private async callSkill(params: Json, signal: AbortSignal, run?: TaskRun): Promise<Json> {
    const skill = this.skills.get(wireText(params.name));
    if (skill === undefined)
      throw Object.assign(new Error(`Unknown tool: ${wireText(params.name)}`), { code: -32602 });
    const args = (params.arguments ?? {}) as Json;
    const progressToken = (params._meta as Json | undefined)?.progressToken;
    const related = run && { _meta: { [RELATED_TASK]: { taskId: run.taskId } } };
    let task: { id: string; contextId: string } | undefined;
    try {
      let parts = firstParts(args, skill.dataOnly);
      for (let turn = 0; ; turn++) {
        const outgoing = messageOf(
          'user',
          parts,
          task ? { taskId: task.id, contextId: task.contextId } : {},
          { skill: skill.id },
        );
        const outcome = await exchange(
          {
            client: this.client!,
            card: this.card!,
            agent: this.options.name,
            closed: this.closing.signal,
            late: this.late,
            maxMessageBytes: this.options.maxMessageBytes,
          },
          outgoing,
          signal,
          (text, n) => {
            if (progressToken !== undefined)
              this.deliver({
                jsonrpc: '2.0',
                method: 'notifications/progress',
                params: { progressToken, progress: n, message: text, ...related },
              });
          },
          // Known from the first answer (a stream's first event): a cancel from then on reaches it.
          (t) => (task = { id: t.id, contextId: t.contextId }),
        );
        if ('message' in outcome) return partsToResult(outcome.message.parts);
        task = { id: outcome.task.id, contextId: outcome.task.contextId };
        const state = outcome.task.status?.state;
        if (state === TaskState.TASK_STATE_INPUT_REQUIRED) {
          const asked = elicitationFor(this.options.name, outcome.task.status?.message);
          if (run) {
            run.waiting(textOf(outcome.task.status?.message));
            await abortable(run.collected(), signal);
          }
          const answer = await this.ask('elicitation/create', { ...asked, ...related }, signal);
          run?.resumed();
          if (answer.action !== 'accept') {
            await this.client!.cancelTask({ tenant: '', id: task.id, metadata: undefined }).catch(() => {});
            return partsToResult(
              [textPart(`The agent asked for input and the answer was: ${String(answer.action)}.`)],
              true,
            );
          }
          parts = answerParts(answer, asked);
          continue;
        }
        return taskResult(outcome.task);
      }
    } catch (err) {
      if (signal.aborted && task)
        await this.client!.cancelTask({ tenant: '', id: task.id, metadata: undefined }).catch(() => {});
      throw err;
    }
  }

  /** Puts a request to switchboard on this channel (the backend's question) and waits for its answer. */
  private ask(method: string, params: Json, signal: AbortSignal): Promise<Json> {
    const id = `a2a-${randomUUID()}`;
    return new Promise<Json>((resolve, reject) => {
      const onAbort = () => {
        this.asking.delete(id);
        reject(signal.reason instanceof Error ? signal.reason : new Error('cancelled'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.asking.set(id, (m) => {
        signal.removeEventListener('abort', onAbort);
        if (m.error) reject(Object.assign(new Error(String((m.error as Json).message)), m.error));
        else resolve((m.result ?? {}) as Json);
      });
      this.deliver({ jsonrpc: '2.0', id, method, params });
    });
  }
}

function withSlash(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}

/**
 * The parse error behind `err`, if the agent sent something that is not JSON: a SyntaxError, one
 * in its causes, or the A2A client's own error for a stream event it could not parse (it quotes
 * the event's first 100 characters and V8's message, and over REST keeps no cause).
 */
function unparsedJson(err: unknown): unknown {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof SyntaxError) return e;
    if (e.message.startsWith('Failed to parse SSE event data')) return e.cause ?? new SyntaxError(e.message);
  }
  return undefined;
}
