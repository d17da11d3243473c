// The loop guard, in two stages. Every call forwarded to a backend tells it, in _meta, the chain
// it belongs to; a bridge call made while serving it carries that back. The link stage refuses a
// chain that names no call of that backend under way and links the call to its parent (so
// cancelling the outer call cancels the whole chain); the guard refuses a call that would revisit
// a backend or grow past the depth limit.
import { WIRE, WireError } from '../../errors/errors.js';
import { chainClaim } from '../../protocol/chain-meta.js';
import type { Stage } from '../compose.js';
import { linkSignals } from '../../call/signals.js';
import { abortOf, setAbort } from '../../call/new-call.js';
import type { CallContext } from '../../call/context.js';

export interface ChainOptions {
  maxDepth: number;
  /** Calls under way, by call id: the possible parents of a bridge call. */
  live: ReadonlyMap<string, CallContext>;
  /** The parent of a bridge call that carried no chain, when it can be told for certain. */
  inferParent(backend: string): CallContext | undefined;
  /** This node's name in a mesh: backends of its own in a chain another node tells are named so. */
  node?: string | undefined;
}

/**
 * Links a backend's call to the call it is made while serving, and records its chain (`path`):
 * before anything answers it, switchboard's meta-tools included, so that the calls a meta-tool
 * makes for it carry the whole chain. After admission: a bridge call takes a slot of its own.
 */
export function chainLinkStage(options: ChainOptions): Stage {
  // Not async itself: an async wrapper is a promise per call, and most calls link nothing.
  return function chainLink(ctx, next) {
    // A backend's question on the way back belongs to the call it is about, not to a new chain.
    if (ctx.caller.kind !== 'backend' || ctx.returning) return next();
    const self = ctx.caller.id;
    const claim = chainClaim(ctx.params);
    const remote = remoteChain(ctx, claim, options.node, options.maxDepth);
    // A call switchboard makes while serving another (a meta-tool's, a handler's) has that call
    // as its parent already; one off a backend's wire is linked by the chain it claims.
    const parent =
      remote !== undefined
        ? undefined
        : ctx.parent
          ? parentOf(ctx.parent, self)
          : claim === undefined
            ? options.inferParent(self)
            : parentOf(claim === 'malformed' ? undefined : options.live.get(claim.id), self);
    if (claim !== undefined && !parent && !remote) {
      // A chain is only ever the one switchboard recorded: a backend that names a call it is not
      // serving (made up, finished, another backend's) could otherwise start its chain afresh
      // and so run a loop. Without a chain, the call starts a fresh one.
      ctx.decision = { effect: 'deny', rule: 'chain.unknown' };
      throw new WireError(
        WIRE.CALL_CHAIN_UNKNOWN,
        `Call chain ${claim === 'malformed' ? '(malformed)' : JSON.stringify(claim.id)} is not a call of ${self} under way`,
      );
    }
    // The path is switchboard's record of the chain, never the one the backend tells.
    let path = remote ?? (parent ? chainOf(parent, self) : [self]);
    // A backend speaks only for itself: the chain always ends with the caller.
    if (path[path.length - 1] !== self) path = [...path, self];
    ctx.path = path;
    if (!parent) return next();
    ctx.parent = parent;
    const link = linkSignals([abortOf(ctx), abortOf(parent)]);
    setAbort(ctx, link.source);
    return next().finally(link.unlink);
  };
}

/**
 * The loop guard proper, once the target is known: a backend's call that would revisit a backend
 * of its chain, or reach past the depth limit, is refused. Only backends count: a handler or a
 * list answered inside switchboard adds no hop.
 */
export function chainGuardStage(maxDepth: number): Stage {
  return function chain(ctx, next) {
    const target = ctx.target?.backend;
    if (ctx.caller.kind !== 'backend' || ctx.returning || !target) return next();
    const path = ctx.path;
    if (path.includes(target)) {
      ctx.decision = { effect: 'deny', rule: 'chain.cycle' };
      throw new WireError(WIRE.CALL_CYCLE, `Call cycle: ${[...path, target].join(' -> ')}`, {
        path: [...path, target],
      });
    }
    if (path.length + 1 > maxDepth) {
      ctx.decision = { effect: 'deny', rule: 'chain.depth' };
      throw new WireError(
        WIRE.CALL_TOO_DEEP,
        `Call chain too deep: ${[...path, target].join(' -> ')} exceeds ${maxDepth}`,
      );
    }
    return next();
  };
}

/**
 * The live call a bridge call names as its parent, if it can be one: a call that was sent to this
 * backend, or one this backend made itself (a handler's further calls). Any other id is not its
 * to claim, whether guessed or passed along from elsewhere.
 */
function parentOf(call: CallContext | undefined, self: string): CallContext | undefined {
  if (!call) return undefined;
  if (call.target?.backend === self) return call;
  if (call.caller.kind === 'backend' && call.caller.id === self) return call;
  return undefined;
}

/**
 * The chain of a backend's call that another node sent here (the mesh door), as that node recorded
 * it: the call it names runs there, not here, and the node's assertion vouches for the message
 * the chain is in. Its last member is that node's name for the hop to this one; the rest are
 * named with the node they ran on (`memory@a`), this node's own by their own names again, so a
 * chain that comes back to one of them is a cycle here too.
 */
function remoteChain(
  ctx: CallContext,
  claim: ReturnType<typeof chainClaim>,
  node: string | undefined,
  maxDepth: number,
): string[] | undefined {
  const from = ctx.mesh?.node;
  if (from === undefined || !ctx.caller.id.endsWith(`@${from}`)) return undefined;
  if (claim === undefined || claim === 'malformed') return undefined;
  // The last member is the hop to this node. A chain longer than any allowed is refused for its
  // depth: only its end is read and named, with how many hops came before.
  const told = claim.path.length - 1;
  const kept = claim.path.slice(Math.max(0, told - maxDepth), -1);
  const named = kept.map((name) => {
    const at = name.lastIndexOf('@');
    if (at === -1) return `${name}@${from}`;
    return name.slice(at + 1) === node ? name.slice(0, at) : name;
  });
  return kept.length < told ? [`(${told - kept.length} more)`, ...named] : named;
}

/** The chain a call made while serving `parent` belongs to, as switchboard itself recorded it. */
function chainOf(parent: CallContext, self: string): string[] {
  return parent.target?.backend === self ? [...parent.path, self] : [...parent.path];
}
