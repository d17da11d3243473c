// A real HTTP server on a free port standing in for a client's push-notification webhook: it keeps
// every request it gets (path, headers, body) and answers 200, or what the test tells it to.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { TestContext } from 'node:test';
import { TaskState } from '@a2a-js/sdk';
import { listenForTest } from '../support/listen.js';
import { until } from '../support/poll.js';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface WebhookReceiver {
  /** http://<host>:<port> */
  readonly origin: string;
  readonly port: number;
  readonly requests: Received[];
  /** The answer to each request from now on (default 200, no headers). */
  answer(status: number, headers?: Record<string, string>): void;
  /** The task states in the updates received for `taskId`, in order of arrival. */
  states(taskId: string): TaskState[];
  /** Waits until an update says `taskId` reached `state`. */
  until(taskId: string, state: TaskState): Promise<void>;
}

type Update = {
  task?: { id: string; status?: { state?: string } };
  statusUpdate?: { taskId: string; status?: { state?: string } };
};

/** @param at where to listen (default 127.0.0.1, a free port). */
export async function webhookReceiver(
  t: TestContext,
  at: { host?: string; port?: number } = {},
): Promise<WebhookReceiver> {
  const host = at.host ?? '127.0.0.1';
  const requests: Received[] = [];
  let reply: { status: number; headers: Record<string, string> } = { status: 200, headers: {} };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.writeHead(reply.status, reply.headers).end();
    });
  });
  // Switchboard keeps its connections to a webhook alive: they end with the receiver.
  const port = await listenForTest(t, server, host, at.port);
  const states = (taskId: string): TaskState[] =>
    requests.flatMap((r) => {
      const u = JSON.parse(r.body) as Update;
      const state =
        u.task?.id === taskId
          ? u.task.status?.state
          : u.statusUpdate?.taskId === taskId
            ? u.statusUpdate.status?.state
            : undefined;
      return state ? [TaskState[state as keyof typeof TaskState]] : [];
    });
  return {
    origin: `http://${host}:${port}`,
    port,
    requests,
    answer: (status, headers = {}) => (reply = { status, headers }),
    states,
    until: (taskId, state) =>
      until(
        () => (states(taskId).includes(state) ? true : undefined),
        `task ${taskId} to reach ${TaskState[state]} at the webhook`,
      ).then(() => undefined),
  };
}
