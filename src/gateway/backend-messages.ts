// What backends say and ask on their own, routed to host sessions: list changes become catalog
// refreshes, resource updates reach their subscribers, log lines and server-initiated requests go
// to the session whose call caused them when that is certain, a task's status to the session that
// created the task.
import { muteReply } from '../call/mute-reply.js';
import type { ListenFilter } from '../backends/backend.js';
import type { Upstream } from '../backends/upstream.js';
import type { Catalog, ListKind } from '../catalog/catalog.js';
import { WIRE, WireError } from '../errors/errors.js';
import type { LegacySession } from '../sessions/legacy-session.js';
import type { JsonRpcNotification, JsonRpcRequest, Params, Result } from '../jsonrpc/message.js';
import { wantsLog, type CallContext, type Reply } from '../call/context.js';
import type { Subscriptions } from './subscriptions.js';
import { exposeResultUris } from '../catalog/result-uris.js';
import { RELATED_TASK, exposeRelated, unwrapRelated } from '../tasks/task-ids.js';
import type { TaskRoutes } from '../tasks/task-routes.js';
import { textOf } from '../encoding/text-of.js';

/** Who a backend's message is for: a caller, and the call of its it is about when that is known. */
interface Owner {
  reply: Reply;
  call?: CallContext | undefined;
}

/** A modern caller's subscriptions/listen stream. */
export interface Listener {
  readonly filter: ListenFilter;
  notify(method: string, params?: Params): void;
  /** Ends the stream with an error (what it subscribed to ended for good). */
  end?(error: Error): void;
}

export interface BackendMessagesDeps {
  sessions: ReadonlyMap<string, LegacySession>;
  /** A listen stream by the key its subscriptions are held under. */
  listener(key: string): Listener | undefined;
  catalog: Catalog;
  subscriptions: Subscriptions;
  tasks: TaskRoutes;
  refresh(backend: Upstream, kinds: readonly ListKind[], announced: boolean): Promise<void>;
  /** Puts a backend's question to a caller through the pipeline; resolves with the answer. */
  ask(ask: Ask): Promise<Result>;
  /** What a message to a caller must not contain (vault secrets, patterns), taken out. */
  redact<T>(message: T): T;
  /** A backend said a task's status changed (the id as hosts see it): listen streams watching it read it. */
  taskChanged(taskId: string): void;
}

export class BackendMessages {
  /** URL elicitations in progress, by id: their completion goes to the session that saw them. */
  private readonly elicitations = new Map<string, Owner>();

  constructor(private readonly deps: BackendMessagesDeps) {}

  /** Forgets what a closed session was waiting for. */
  sessionClosed(id: string): void {
    for (const [key, owner] of this.elicitations)
      if (owner.reply.sessionKey === id) this.elicitations.delete(key);
  }

  /**
   * A notification from a backend: catalog refresh, resource updates, logs, or pass-through. What
   * goes to a call's caller passes that call's redaction (the redact stage wraps its reply); what
   * goes to sessions and listen streams outside any call is redacted here: once either way.
   */
  notified(backend: Upstream, raw: JsonRpcNotification): void {
    let n = raw;
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
    // A server's own list_changed is passed on to hosts even when its lists read back the same;
    // but with several instances one may be telling of its own start (a replica restarting, a
    // per-session instance: server-everything announces its tools once up), and hosts hear only
    // what the re-read changes.
    const announced = backend.instances === 1;
    switch (n.method) {
      case 'notifications/tools/list_changed':
        void this.deps.refresh(backend, ['tools'], announced);
        return;
      case 'notifications/prompts/list_changed':
        void this.deps.refresh(backend, ['prompts'], announced);
        return;
      case 'notifications/resources/list_changed':
        void this.deps.refresh(backend, ['resources', 'resourceTemplates'], announced);
        return;
      case 'notifications/resources/updated':
        return this.resourceUpdated(backend.name, p);
      case 'notifications/message':
        return this.relayLog(backend, p);
      case 'notifications/tasks/status':
      case 'notifications/tasks':
        return this.taskStatus(backend, n.method, p);
      case 'notifications/elicitation/complete': {
        const id = textOf(p.elicitationId);
        const owner = this.elicitations.get(id);
        if (owner) this.tell(owner, n.method, p);
        this.elicitations.delete(id);
        return;
      }
      default: {
        // Unknown notifications pass through to every session, untouched but for redaction: of
        // the method too, which the backend chose as freely as the params.
        const method = this.deps.redact(n.method);
        const params = this.deps.redact(n.params);
        for (const s of this.deps.sessions.values()) if (s.initialized) s.notify(method, params);
      }
    }
  }

  /**
   * A resource of `owner` (a backend, or an in-process source) changed: its subscribers hear it,
   * by the URI they see, and nobody else does.
   */
  resourceUpdated(owner: string, p: Params): void {
    if (typeof p.uri !== 'string') return;
    const uri = p.uri;
    const exposed = { ...p, uri: this.deps.catalog.exposeUri(owner, uri) };
    const clean = this.deps.redact(exposed);
    for (const id of this.deps.subscriptions.subscribers(owner, uri)) {
      // A listen stream is a call's reply (its redaction is the redact stage's); a session is not.
      const session = this.deps.sessions.get(id);
      if (session) session.notify('notifications/resources/updated', clean);
      else this.deps.listener(id)?.notify('notifications/resources/updated', exposed);
    }
  }

  /**
   * What hosts subscribed to on a backend ended for good (a mesh server no node serves any more):
   * a listen stream holding any of it ends with an error saying why, a session is told in a
   * warning log line; either subscribes again when the server is back.
   */
  subscriptionsEnded(backend: string, why: string): void {
    for (const [uri, keys] of this.deps.subscriptions.dropBackend(backend)) {
      const exposed = this.deps.catalog.exposeUri(backend, uri);
      const message = `subscription to ${exposed} ended: ${why}`;
      for (const key of keys) {
        const session = this.deps.sessions.get(key);
        if (session?.initialized)
          session.notify('notifications/message', {
            level: 'warning',
            logger: 'switchboard',
            data: { message, uri: exposed },
          });
        else this.deps.listener(key)?.end?.(new WireError(WIRE.BACKEND_UNAVAILABLE, message));
      }
    }
  }

  /**
   * A task's status goes to the session whose call created it, and to no other; listen streams of
   * the caller that created it, watching it, read it again (what they get is tasks/get's answer).
   */
  private taskStatus(backend: Upstream, method: string, params: Params): void {
    const expose = (m: string, r: Result) => exposeResultUris(this.deps.catalog, backend.name, m, r);
    const routed = this.deps.tasks.statusNotified(backend.name, params, expose);
    if (!routed) return;
    if (typeof routed.params.taskId === 'string') this.deps.taskChanged(routed.params.taskId);
    const s = this.deps.sessions.get(routed.sessionKey);
    if (s?.initialized) s.notify(method, this.deps.redact(routed.params));
  }

  /** Progress of a task whose creating call has returned: to that call's session, if it is open. */
  private taskProgress(backend: Upstream, params: Params): boolean {
    const routed = this.deps.tasks.progressNotified(backend.name, params);
    if (!routed) return false;
    const s = this.deps.sessions.get(routed.sessionKey);
    if (routed.params && s?.initialized) s.notify('notifications/progress', this.deps.redact(routed.params));
    return true;
  }

  /**
   * The caller a backend request about one of its tasks (`_meta` related-task) belongs to: the
   * caller waiting on that task's result, else the session that created the task.
   */
  private forTask(backend: Upstream, params: Params | undefined): Owner | undefined {
    const related = params?._meta?.[RELATED_TASK] as { taskId?: unknown } | undefined;
    if (typeof related?.taskId !== 'string') return undefined;
    const waiting = backend
      .callsInFlight()
      .find(
        (c) => c.method === 'tasks/result' && c.target?.kind === 'task' && c.target.name === related.taskId,
      );
    if (waiting) return { reply: waiting.reply, call: waiting };
    const key = this.deps.tasks.sessionOf(backend.name, params);
    const session = key === undefined ? undefined : this.deps.sessions.get(key);
    return session && { reply: session.reply };
  }

  /** A notification to its owner: a call's reply redacts what passes it; anything else is redacted here. */
  private tell(owner: Owner, method: string, params: Params): void {
    owner.reply.notify(method, owner.call ? params : this.deps.redact(params));
  }

  /** A log line goes with the call that caused it when that is certain, else to every session. */
  private relayLog(backend: Upstream, params: Params): void {
    const owner = this.attribute(backend, false);
    if (owner) {
      if (wantsLog(owner.reply, params.level)) this.tell(owner, 'notifications/message', params);
      return;
    }
    const clean = this.deps.redact(params);
    for (const s of this.deps.sessions.values()) {
      if (s.caller.kind === 'host' && s.initialized && wantsLog(s.reply, params.level))
        s.notify('notifications/message', clean);
    }
  }

  /**
   * The caller a backend's message belongs to: the session of its calls in flight when they all
   * come from one session, or the only session there is. Undefined when it cannot be certain.
   */
  private attribute(backend: Upstream, fallBackToOnlySession = true): Owner | undefined {
    const inFlight = backend.callsInFlight();
    const active = inFlight.filter((c) => !c.reply.waiting?.());
    const calls = active.length ? active : inFlight;
    // A modern caller's calls share no stream: each is its own audience.
    const sessions = new Set(calls.map((c) => (c.reply.era === 'modern' ? c.callId : c.reply.sessionKey)));
    if (sessions.size === 1) {
      const call = calls[calls.length - 1]!;
      return { reply: call.reply, call };
    }
    if (sessions.size === 0 && fallBackToOnlySession) {
      const hosts = [...this.deps.sessions.values()].filter((s) => s.caller.kind === 'host');
      if (hosts.length === 1) return { reply: hosts[0]!.reply };
    }
    return undefined;
  }

  /**
   * A request from a backend (sampling, elicitation, roots, ping): put to the caller it belongs to
   * through the return path, which runs the pipeline with the backend as caller (policy,
   * approval, redaction, audit). A question nobody can be found for is refused there too.
   */
  async asked(backend: Upstream, req: JsonRpcRequest, signal: AbortSignal): Promise<Result> {
    const owner = this.forTask(backend, req.params) ?? this.attribute(backend);
    const p = req.params ?? {};
    if (
      owner &&
      req.method === 'elicitation/create' &&
      p.mode === 'url' &&
      typeof p.elicitationId === 'string'
    ) {
      this.elicitations.set(p.elicitationId, owner);
    }
    const params = req.params && exposeRelated(backend.name, req.params);
    const reply = owner?.reply ?? unattributed(backend.name, req.method);
    const answer = await this.deps.ask({
      backend: backend.name,
      reply,
      parent: owner?.call,
      method: req.method,
      params,
      signal,
    });
    return unwrapRelated(backend.name, answer);
  }
}

/** The reply of a question no caller can be found for: asking it fails and says why. */
function unattributed(backend: string, method: string): Reply {
  const why = `switchboard cannot tell which host session ${method} from ${backend} is for`;
  return muteReply({
    sessionKey: `unattributed:${backend}`,
    era: 'legacy',
    refusal: () => new WireError(WIRE.INTERNAL_ERROR, why),
    // Declares everything, so the refusal is this one and not a missing capability.
    capabilities: { sampling: {}, elicitation: {}, roots: {} },
  });
}

/** A question from a backend on its way back to a caller (see InternalCalls.ask). */
export interface Ask {
  backend: string;
  /** The caller to ask. */
  reply: Reply;
  /** The call the backend asks about, when known. */
  parent: CallContext | undefined;
  method: string;
  params: Params | undefined;
  signal: AbortSignal;
}
