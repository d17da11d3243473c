// What backends say and ask on their own, routed to host sessions: list changes become catalog
// refreshes, resource updates reach their subscribers, log lines and server-initiated requests go
// to the session whose call caused them when that is certain, a task's status to the session that
// created the task.
import type { ListenFilter } from '../backends/backend.js';
import type { Upstream as Backend } from '../backends/upstream.js';
import type { Catalog, ListKind } from '../catalog/catalog.js';
import { WIRE, WireError } from '../errors.js';
import type { HostSession } from '../front/session.js';
import type { JsonRpcNotification, JsonRpcRequest, Params, Result } from '../jsonrpc/message.js';
import { wantsLog, type Reply } from '../pipeline/context.js';
import { methodSpec } from '../protocol/methods.js';
import type { Subscriptions } from './subscriptions.js';
import { exposeResultUris } from '../catalog/result-uris.js';
import { RELATED_TASK, exposeRelated, unwrapRelated, type TaskRoutes } from './tasks.js';

/** A modern caller's subscriptions/listen stream. */
export interface Listener {
  readonly filter: ListenFilter;
  notify(method: string, params?: Params): void;
}

export interface BackendMessagesDeps {
  sessions: ReadonlyMap<string, HostSession>;
  /** A listen stream by the key its subscriptions are held under. */
  listener(key: string): Listener | undefined;
  catalog: Catalog;
  subscriptions: Subscriptions;
  tasks: TaskRoutes;
  refresh(backend: Backend, kinds: readonly ListKind[], announced: boolean): Promise<void>;
}

export class BackendMessages {
  /** URL elicitations in progress, by id: their completion goes to the session that saw them. */
  private readonly elicitations = new Map<string, Reply>();

  constructor(private readonly deps: BackendMessagesDeps) {}

  /** Forgets what a closed session was waiting for. */
  sessionClosed(id: string): void {
    for (const [key, reply] of this.elicitations) if (reply.sessionKey === id) this.elicitations.delete(key);
  }

  /** A notification from a backend: catalog refresh, resource updates, logs, or pass-through. */
  notified(backend: Backend, n: JsonRpcNotification): void {
    if (n.method === 'notifications/progress') {
      // Progress of a call in flight went to its caller already (the peer maps our own tokens);
      // what is left is a task's, or late progress of a call that has ended: that goes nowhere,
      // never to every session (its token is switchboard's, and its caller is done).
      this.taskProgress(backend, n.params ?? {});
      return;
    }
    if (n.params?._meta?.[RELATED_TASK] !== undefined)
      n = { ...n, params: exposeRelated(backend.name, n.params) };
    const p = n.params ?? {};
    switch (n.method) {
      case 'notifications/tools/list_changed':
        void this.deps.refresh(backend, ['tools'], true);
        return;
      case 'notifications/prompts/list_changed':
        void this.deps.refresh(backend, ['prompts'], true);
        return;
      case 'notifications/resources/list_changed':
        void this.deps.refresh(backend, ['resources', 'resourceTemplates'], true);
        return;
      case 'notifications/resources/updated': {
        const uri = String(p.uri);
        const exposed = { ...p, uri: this.deps.catalog.exposeUri(backend.name, uri) };
        for (const id of this.deps.subscriptions.subscribers(backend.name, uri)) {
          (this.deps.sessions.get(id) ?? this.deps.listener(id))?.notify(n.method, exposed);
        }
        return;
      }
      case 'notifications/message':
        return this.relayLog(backend, p);
      case 'notifications/tasks/status':
      case 'notifications/tasks':
        return this.taskStatus(backend, n.method, p);
      case 'notifications/elicitation/complete': {
        const id = String(p.elicitationId);
        this.elicitations.get(id)?.notify(n.method, p);
        this.elicitations.delete(id);
        return;
      }
      default:
        // Unknown notifications pass through to every session untouched.
        for (const s of this.deps.sessions.values()) if (s.initialized) s.notify(n.method, n.params);
    }
  }

  /** A task's status goes to the session whose call created it, and to no other. */
  private taskStatus(backend: Backend, method: string, params: Params): void {
    const expose = (m: string, r: Result) => exposeResultUris(this.deps.catalog, backend.name, m, r);
    const routed = this.deps.tasks.statusNotified(backend.name, params, expose);
    if (!routed) return;
    const s = this.deps.sessions.get(routed.sessionKey);
    if (s?.initialized) s.notify(method, routed.params);
  }

  /** Progress of a task whose creating call has returned: to that call's session, if it is open. */
  private taskProgress(backend: Backend, params: Params): boolean {
    const routed = this.deps.tasks.progressNotified(backend.name, params);
    if (!routed) return false;
    const s = this.deps.sessions.get(routed.sessionKey);
    if (routed.params && s?.initialized) s.notify('notifications/progress', routed.params);
    return true;
  }

  /**
   * The caller a backend request about one of its tasks (`_meta` related-task) belongs to: the
   * caller waiting on that task's result, else the session that created the task.
   */
  private forTask(backend: Backend, params: Params | undefined): Reply | undefined {
    const related = params?._meta?.[RELATED_TASK] as { taskId?: unknown } | undefined;
    if (typeof related?.taskId !== 'string') return undefined;
    const waiting = backend
      .callsInFlight()
      .find(
        (c) => c.method === 'tasks/result' && c.target?.kind === 'task' && c.target.name === related.taskId,
      );
    if (waiting) return waiting.reply;
    const key = this.deps.tasks.sessionOf(backend.name, params);
    return key === undefined ? undefined : this.deps.sessions.get(key)?.reply;
  }

  /** A log line goes with the call that caused it when that is certain, else to every session. */
  private relayLog(backend: Backend, params: Params): void {
    const owner = this.attribute(backend, false);
    if (owner) {
      if (wantsLog(owner, params.level)) owner.notify('notifications/message', params);
      return;
    }
    for (const s of this.deps.sessions.values()) {
      if (s.caller.kind === 'host' && s.initialized && wantsLog(s.reply, params.level))
        s.notify('notifications/message', params);
    }
  }

  /**
   * The caller a backend's message belongs to: the session of its calls in flight when they all
   * come from one session, or the only session there is. Undefined when it cannot be certain.
   */
  private attribute(backend: Backend, fallBackToOnlySession = true): Reply | undefined {
    const inFlight = backend.callsInFlight();
    const active = inFlight.filter((c) => !c.reply.waiting?.());
    const calls = active.length ? active : inFlight;
    // A modern caller's calls share no stream: each is its own audience.
    const sessions = new Set(calls.map((c) => (c.reply.era === 'modern' ? c.callId : c.reply.sessionKey)));
    if (sessions.size === 1) return calls[calls.length - 1]!.reply;
    if (sessions.size === 0 && fallBackToOnlySession) {
      const hosts = [...this.deps.sessions.values()].filter((s) => s.caller.kind === 'host');
      if (hosts.length === 1) return hosts[0]!.reply;
    }
    return undefined;
  }

  /** A request from a backend (sampling, elicitation, roots): sent to the session it belongs to. */
  async asked(backend: Backend, req: JsonRpcRequest, signal: AbortSignal): Promise<Result> {
    if (req.method === 'ping') return {};
    const reply = this.forTask(backend, req.params) ?? this.attribute(backend);
    if (!reply) {
      throw new WireError(
        WIRE.INTERNAL_ERROR,
        `switchboard cannot tell which host session ${req.method} from ${backend.name} is for`,
      );
    }
    const p = req.params ?? {};
    if (req.method === 'elicitation/create' && p.mode === 'url' && typeof p.elicitationId === 'string') {
      this.elicitations.set(p.elicitationId, reply);
    }
    const params = req.params && exposeRelated(backend.name, req.params);
    return unwrapRelated(backend.name, await askCaller(reply, req.method, params, signal));
  }
}

/**
 * Asks a caller what a backend needs from it (sampling, elicitation, roots), if it declared the
 * capability: a legacy host gets a request in its session, a modern one an input_required result.
 */
export function askCaller(
  reply: Reply,
  method: string,
  params: Params | undefined,
  signal: AbortSignal,
): Promise<Result> {
  const needs = methodSpec(method)?.capability;
  if (needs && !reply.capabilities[needs]) {
    const err = new WireError(WIRE.METHOD_NOT_FOUND, `The host does not support ${needs}`);
    // A modern call that needs a capability its request did not declare fails as a whole, with
    // the era's own error (MissingRequiredClientCapability); the backend hears the same.
    if (reply.era === 'modern' && reply.refuse) {
      return Promise.reject(
        reply.refuse(
          new WireError(
            WIRE.MISSING_CLIENT_CAPABILITY,
            `The request needs the client capability ${needs}, which it did not declare`,
            { requiredCapabilities: { [needs]: {} } },
          ),
        ),
      );
    }
    return Promise.reject(err);
  }
  return reply.request(method, params, signal);
}
