// The innermost stage: answers list calls from the merged catalog and sends targeted calls to
// the backend that owns them, with the backend's own name or URI in place of the exposed one.
import type { CallOptions, Upstream } from '../../backends/upstream.js';
import type { Catalog, ListKind } from '../../catalog/catalog.js';
import { exposeResultUris } from '../../catalog/result-uris.js';
import { backendFailure, LocalError, WIRE, WireError } from '../../errors/errors.js';
import type { Params, Result } from '../../jsonrpc/message.js';
import type { Handler, HandlerChain } from '../../handlers/handler-chain.js';
import type { Stage } from '../compose.js';
import type { CallContext } from '../../call/context.js';
import { isAborted } from '../../call/new-call.js';
import { CHAIN_META } from '../../protocol/chain-meta.js';
import { answerInputRequired, isInputRequired } from '../../eras/input-required.js';
import { legacyResult } from '../../eras/legacy-result.js';
import type { TaskRoutes } from '../../tasks/task-routes.js';
import { runsToolCallsAsTasks } from '../../tasks/task-capabilities.js';
import { methodSpec } from '../../protocol/methods.js';
import { askCaller } from '../ask-caller.js';
import { hop } from '../hop.js';
import { settleInTime } from '../handler-deadline.js';
import { HandlerCall } from '../handler-call.js';
import { markLookalike, markLookalikeInputs } from '../../trust/approval-lookalike.js';
import type { CatalogSource } from '../catalog-source.js';
import { plain } from '../../encoding/raw-text.js';
import type { InFlightMap } from '../../jsonrpc/in-flight-map.js';

export interface RouteServices {
  catalog: Catalog;
  backend(name: string): Upstream | undefined;
  /** The in-process source of that name (workflows, ...), if one owns the target rather than a backend. */
  source?(name: string): CatalogSource | undefined;
  /** The merged list of one kind, refreshed first from backends that do not announce changes. */
  list(kind: ListKind, ctx: CallContext): Promise<Result>;
  subscribe(ctx: CallContext, backend: Upstream, uri: string): Promise<Result>;
  unsubscribe(ctx: CallContext, backend: Upstream, uri: string): Promise<Result>;
  /** resources/subscribe (true) or unsubscribe (false) on an in-process source's resource. */
  sourceSubscription?(ctx: CallContext, source: CatalogSource, uri: string, subscribe: boolean): Result;
  handlers: HandlerChain;
  /** How long a handler may take. */
  handlerTimeoutMs: number;
  /** A further call by the same caller, as a child of `parent` (handlers use it). */
  dispatch(parent: CallContext, method: string, params?: Params, signal?: AbortSignal): Promise<Result>;
  /** Calls under way, by call id, so calls made on their behalf can find them. */
  live: InFlightMap<string, CallContext>;
  /** Whether forwarded calls carry the call chain in _meta (only when the bridge is on). */
  tellChain: boolean;
  /** Which backend and caller each task belongs to; the merged tasks/list. */
  tasks: TaskRoutes;
  /** Answers what switchboard answers itself: handshake, ping, log level, discover, listen. */
  housekeeping(ctx: CallContext): Promise<Result> | Result;
  /** Puts a backend's question about `parent` to the caller, through the return path. */
  ask(parent: CallContext, backend: string, method: string, params: Params | undefined): Promise<Result>;
}

/** The subscription methods, and whether each subscribes. */
const SUBSCRIBING: Record<string, boolean | undefined> = {
  'resources/subscribe': true,
  'resources/unsubscribe': false,
};

export function routeStage(services: RouteServices): Stage {
  // Not async itself: a handler that answers at once (most do) is answered with no promise of its own.
  return function route(ctx) {
    // While a call is under way, calls made on its behalf (bridge, handlers) find it here.
    services.live.set(ctx.callId, ctx);
    const ended = () => services.live.delete(ctx.callId);
    let answered: Result | PromiseLike<Result>;
    try {
      answered = answer(services, ctx);
    } catch (err) {
      ended();
      return Promise.reject(err);
    }
    if (!isThenable(answered)) {
      ctx.result = answered;
      ended();
      return Promise.resolve();
    }
    return Promise.resolve(answered).then(
      (result) => {
        ctx.result = result;
        ended();
      },
      (err: unknown) => {
        ended();
        throw err;
      },
    );
  };
}

function answer(services: RouteServices, ctx: CallContext): Result | PromiseLike<Result> {
  const spec = methodSpec(ctx.method);
  // On the way back a backend's request goes to its caller, whatever it is (only its ping is
  // answered here): nothing a backend sends up its own connection is a call of switchboard's.
  // What a backend asks is marked as its own where it imitates switchboard's approval prompt.
  if (ctx.returning && ctx.method !== 'ping')
    return askCaller(ctx.reply, ctx.method, markLookalike(ctx.caller.id, ctx.method, ctx.params), ctx.signal);
  // Arguments with large strings as bytes (wire-parse.ts) go to a backend as they came; code in
  // this process that answers a call (handlers, in-process sources) reads them as text.
  if (!ctx.target || services.source?.(ctx.target.backend)) ctx.params = plain(ctx.params);
  switch (spec?.answeredBy) {
    case 'catalog':
      // Whole: the page stage, outside policy, pages it once filtered (and checked the cursor).
      return services.list(spec.list!.kind, ctx);
    case 'tasks':
      return services.tasks.list(ctx);
    case 'switchboard':
      return services.housekeeping(ctx);
  }
  const target = ctx.target;
  if (!target) {
    const handler = services.handlers.find(ctx.method);
    if (!handler) throw new WireError(WIRE.METHOD_NOT_FOUND, `Method not found: ${ctx.method}`);
    return runHandler(services, ctx, handler);
  }
  return forward(services, ctx, target);
}

/** A call with a target: to the in-process source or the backend that owns it. */
async function forward(
  services: RouteServices,
  ctx: CallContext,
  target: NonNullable<CallContext['target']>,
): Promise<Result> {
  // An in-process source answers the calls on its own items (a workflow tool runs its steps).
  // Its CreateTaskResult becomes the caller's task, as a backend's would; its tasks are its own.
  const source = services.source?.(target.backend);
  if (source && services.sourceSubscription && SUBSCRIBING[ctx.method] !== undefined)
    return services.sourceSubscription(ctx, source, target.name, SUBSCRIBING[ctx.method]!);
  if (source && target.kind !== 'task')
    return services.tasks.answered(ctx, source.name, await source.call(ctx));
  if (source?.tasks && target.kind === 'task')
    return services.tasks.taskAnswered(ctx, target, await source.tasks.call(ctx, target.name), (_m, r) => r);
  const backend = services.backend(target.backend);
  if (!backend) throw new WireError(WIRE.INVALID_PARAMS, `Unknown target: ${target.name}`);
  if (ctx.resume && ctx.resume.backend !== backend.name) {
    // The name now belongs to another backend than the one that asked for input (a reload).
    throw new WireError(WIRE.INVALID_PARAMS, 'requestState does not belong to this request');
  }
  switch (ctx.method) {
    case 'resources/subscribe':
      return services.subscribe(ctx, backend, target.sent ?? target.name);
    case 'resources/unsubscribe':
      return services.unsubscribe(ctx, backend, target.sent ?? target.name);
    default: {
      if (
        ctx.method === 'tools/call' &&
        ctx.params.task !== undefined &&
        !runsToolCallsAsTasks(backend.capabilities)
      ) {
        // The host's merged capabilities offer tasks when any backend runs them; this one does not.
        throw new WireError(
          WIRE.METHOD_NOT_FOUND,
          `Backend ${backend.name} does not run tools/call as a task`,
        );
      }
      let params = services.tasks.inbound(ctx.caller, backend.name, backendParams(ctx));
      if (services.tellChain) {
        params = {
          ...params,
          _meta: { ...params._meta, [CHAIN_META]: { id: ctx.callId, path: [...ctx.path, backend.name] } },
        };
      }
      // The one place a backend's answer to a forwarded call becomes the caller's: what the
      // backend got wrong is not reported as the caller's fault.
      // Each request to the backend is a hop (traces time it and stamp its _meta).
      const call = (p: Params, options: CallOptions) =>
        hop(ctx, backend, p, (sent) => backend.call(ctx, ctx.method, sent, options)).catch((err: unknown) => {
          throw backendFailure(backend.name, err);
        });
      // A retry after input_required goes to the replica that asked (its state may live there).
      let result = await call(params, {
        replica: ctx.resume?.replica,
        served: (replica) => (ctx.replica = replica),
      });
      // A modern caller takes input_required as it is (the front seals its requestState); for
      // any other caller switchboard asks the questions and retries.
      if (isInputRequired(result) && ctx.reply.era !== 'modern') {
        result = await answerInputRequired(
          result,
          (method, asked) => services.ask(ctx, backend.name, method, asked),
          (extra) => call({ ...params, ...extra }, { replica: ctx.replica }),
        );
      }
      // A modern backend's own questions go to a modern caller as they are, but for lookalikes.
      if (isInputRequired(result)) result = markLookalikeInputs(backend.name, result);
      // A legacy caller gets a result of its own revision: no fields only the modern era defines.
      // Tasks pass between eras untranslated (their shapes are the tasks extension's).
      else if (ctx.reply.era === 'legacy' && target.kind !== 'task' && !ctx.method.startsWith('tasks/'))
        result = legacyResult(result);
      const expose = (method: string, r: Result) =>
        exposeResultUris(services.catalog, backend.name, method, r);
      if (target.kind === 'task') {
        return services.tasks.taskAnswered(ctx, target, result, expose);
      }
      return services.tasks.answered(ctx, backend.name, expose(ctx.method, result));
    }
  }
}

/**
 * Runs a handler under the caller's cancellation and the handler time limit: the caller gets its
 * answer or an error in time even from a handler that ignores its signal. A handler that answers
 * at once (most do) needs neither, and one that answers within its turn never has them set up
 * (handler-deadline.ts). Neither the caller's signal nor the handler's own (aborted by either) is
 * made unless something reads it: an AbortController with its listeners is a measurable share of
 * a handler call.
 */
function runHandler(
  services: RouteServices,
  ctx: CallContext,
  handler: Handler,
): Result | PromiseLike<Result> {
  // The caller's signal is read only where it is needed: most calls never make it (new-call.ts).
  if (isAborted(ctx)) throw new LocalError('cancelled', 'Request cancelled');
  const call = new HandlerCall(ctx, services);
  let answer: ReturnType<Handler>;
  try {
    answer = handler(ctx.params, call);
  } catch (err) {
    call.end();
    throw err;
  }
  if (!isThenable(answer)) {
    call.end();
    return answer;
  }
  return settleInTime(answer, {
    get caller() {
      return ctx.signal;
    },
    // A watch or a subscription is open until its caller cancels it: no time limit.
    limitMs: services.handlers.streams(ctx.method) ? undefined : services.handlerTimeoutMs,
    method: ctx.method,
    onTimeout: () => call.timeOut(),
  }).finally(() => call.end());
}

function isThenable(value: unknown): value is PromiseLike<Result> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** The caller's params with the exposed name or URI replaced by the backend's own. */
function backendParams(ctx: CallContext): Params {
  const p = ctx.params;
  const name = ctx.target!.sent ?? ctx.target!.name;
  switch (ctx.target!.kind) {
    case 'tool':
    case 'prompt':
      return { ...p, name };
    case 'resource':
      return { ...p, uri: name };
    case 'completion': {
      const ref = p.ref as Record<string, unknown>;
      return { ...p, ref: ref.type === 'ref/prompt' ? { ...ref, name } : { ...ref, uri: name } };
    }
    case 'task':
      return { ...p, taskId: name };
  }
}
