// The SDK call context of one A2A request to switchboard as an agent, the same for every binding:
// the user is the caller the HTTP front authenticated (its task scope: one agent never sees
// another's tasks), and the state carries that caller and the endpoint URL for the executor and card.
import type { Extensions } from '@a2a-js/sdk';
import { ServerCallContext, type User } from '@a2a-js/sdk/server';
import type { Caller } from '../call/context.js';
import { CALLER_STATE } from './executor.js';

export const ENDPOINT_STATE = 'switchboard.endpoint';

/** The A2A user of an authenticated caller; its name (`agent:<id>`) is the owner of its tasks. */
export class AgentUser implements User {
  constructor(
    readonly caller: Caller,
    /** The URL the request reached the agent at (its card lists the interfaces under that host). */
    readonly endpoint: string,
  ) {}
  get isAuthenticated(): boolean {
    return true;
  }
  get userName(): string {
    return `${this.caller.kind}:${this.caller.id}`;
  }
}

export function agentContext(
  user: AgentUser,
  requestedVersion: string | undefined,
  more: { tenant?: string | undefined; extensions?: Extensions | undefined } = {},
): ServerCallContext {
  return new ServerCallContext({
    user,
    // This agent speaks A2A 1.0; a request that names no version is taken as one.
    requestedVersion: requestedVersion || '1.0',
    ...(more.tenant !== undefined && { tenant: more.tenant }),
    ...(more.extensions !== undefined && { requestedExtensions: more.extensions }),
    state: new Map<string, unknown>([
      [CALLER_STATE, user.caller],
      [ENDPOINT_STATE, user.endpoint],
    ]),
  });
}
