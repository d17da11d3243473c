// SDK clients of switchboard as an A2A agent for tests: over one binding (JSON-RPC or HTTP+JSON),
// with or without an API key, and the small readers the A2A tests share.
import assert from 'node:assert/strict';
import type { Message, SendMessageRequest, Task } from '@a2a-js/sdk';
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import { dataPart, messageOf } from '../../src/a2a/parts.js';

export type Binding = 'JSONRPC' | 'HTTP+JSON';

/** A fetch that sends `key` as a bearer token on every request. */
export function fetchWithKey(key: string | undefined): typeof fetch {
  if (key === undefined) return fetch;
  return (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${key}`);
    return fetch(input, { ...init, headers });
  };
}

/** A client of the agent at `origin` speaking only `binding`, as the holder of `key`. */
export function agentClient(origin: string, binding: Binding, key?: string): Promise<Client> {
  const fetchImpl = fetchWithKey(key);
  const transport =
    binding === 'JSONRPC'
      ? new JsonRpcTransportFactory({ fetchImpl })
      : new RestTransportFactory({ fetchImpl });
  return new ClientFactory({
    transports: [transport],
    preferredTransports: [binding],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  }).createFromUrl(origin);
}

/** A SendMessage request calling `skill` (a follow-up on a task when `ids` are given). */
export const skillCall = (
  skill: string,
  args: Record<string, unknown> = {},
  ids?: { taskId: string; contextId: string },
): SendMessageRequest => ({
  tenant: '',
  message: messageOf('user', [dataPart({ skill, arguments: args })], ids),
  configuration: undefined,
  metadata: undefined,
});

export function asTask(r: Message | Task): Task {
  assert.ok('status' in r, `expected a task, got ${JSON.stringify(r)}`);
  return r;
}

/** The text parts of a task's artifacts. */
export function artifactTexts(task: Task): string[] {
  return task.artifacts.flatMap((a) =>
    a.parts.flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : [])),
  );
}

/** The text of a task's status message. */
export function statusText(task: Task): string {
  return (task.status?.message?.parts ?? [])
    .flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : []))
    .join('\n');
}
