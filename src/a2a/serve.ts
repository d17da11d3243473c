// Switchboard as an A2A agent on the HTTP front: the agent card at /.well-known/agent-card.json,
// the A2A JSON-RPC endpoint (a2a.serve.path, over node:http: plain JSON, or SSE for streaming
// methods) and the HTTP+JSON binding (a2a.serve.restPath, see rest.ts), both answered by one SDK
// request handler over the durable task store (and, when offered, its push notifications: see
// push-store.ts, push-sender.ts). Callers authenticate as the front's hosts do and act as
// `agent:<id>`; every skill call is one call through the pipeline (see skill-run.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { A2A_VERSION_HEADER, AgentCard } from '@a2a-js/sdk';
import {
  DefaultExecutionEventBusManager,
  DefaultRequestHandler,
  JsonRpcTransportHandler,
  resolveUserScope,
  validateVersion,
  type PushNotificationSender,
  type PushNotificationStore,
  type TaskStore,
} from '@a2a-js/sdk/server';
import type { Caller } from '../call/context.js';
import type { Config } from '../config/schema.js';
import { nestsDeeperThan } from '../encoding/nesting.js';
import { MAX_MESSAGE_DEPTH } from '../jsonrpc/message.js';
import type { Logger } from '../log.js';
import { AgentUser, ENDPOINT_STATE, agentContext } from './agent-context.js';
import { buildCard, interfacesAt, type CardOptions } from './card.js';
import { CALLER_STATE, SkillExecutor } from './executor.js';
import { restBinding } from './rest.js';
import type { RunCall } from './skill-run.js';

export const AGENT_CARD_PATH = '/.well-known/agent-card.json';

/** How the HTTP front authenticates a request: its caller, or undefined once it answered (401). */
export type Authenticate = (req: IncomingMessage, res: ServerResponse) => Promise<Caller | undefined>;

/** A route the HTTP front offers a request before its own: true when it answered it. */
export type HttpRoute = (
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  authenticate: Authenticate,
) => Promise<boolean>;

export interface A2AServeOptions {
  settings: Config['a2a']['serve'];
  /** Whether the HTTP front authenticates callers (http.auth mode other than none). */
  authenticated: boolean;
  maxMessageBytes: number;
  /** Where the agent's tasks are kept (scoped by owner: the caller's `agent:<id>`). */
  tasks: TaskStore;
  /** Push notifications, when offered (a2a.serve.pushNotifications): their configs and their sender. */
  push?: { store: PushNotificationStore; sender: PushNotificationSender } | undefined;
  run: RunCall;
  log: Logger;
}

/** The caller an authenticated HTTP request makes as an agent: `agent:<the host id it proved>`. */
export const agentOf = (c: Caller): Caller => ({ kind: 'agent', id: c.id });

export function a2aRoute(options: A2AServeOptions): HttpRoute {
  const { settings, run, log } = options;
  const cardOptions = {
    settings,
    authenticated: options.authenticated,
    pushNotifications: options.push !== undefined,
  };
  const executor = new SkillExecutor(run);
  const handler = new DefaultRequestHandler(
    // The handler's own card: what it checks versions and capabilities against (push
    // notifications among them: without them every push-config method is refused as unsupported).
    emptyCard(cardOptions),
    options.tasks,
    executor,
    new DefaultExecutionEventBusManager(resolveUserScope),
    options.push?.store,
    options.push?.sender,
    (context) =>
      buildCard(
        run,
        cardOptions,
        context.state.get(CALLER_STATE) as Caller,
        String(context.state.get(ENDPOINT_STATE)),
      ),
  );
  const transport = new JsonRpcTransportHandler(handler);
  const rest = restBinding(handler, settings.restPath);

  /** The origin the request reached the agent at; the card's interface URLs are under it. */
  function originOf(req: IncomingMessage): string {
    return `http://${req.headers.host ?? 'localhost'}`;
  }

  async function card(req: IncomingMessage, res: ServerResponse, authenticate: Authenticate): Promise<void> {
    // Credentials, when given, are checked and decide the skills listed; without them an
    // authenticating front shows the card without skills.
    let caller: Caller | undefined;
    if (req.headers.authorization !== undefined || !options.authenticated) {
      const host = await authenticate(req, res);
      if (!host) return;
      caller = agentOf(host);
    }
    const body = JSON.stringify(AgentCard.toJSON(await buildCard(run, cardOptions, caller, originOf(req))));
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(body);
  }

  async function rpc(req: IncomingMessage, res: ServerResponse, authenticate: Authenticate): Promise<void> {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST', 'content-type': 'text/plain' }).end('Method not allowed');
      return;
    }
    const host = await authenticate(req, res);
    if (!host) return;
    const caller = agentOf(host);
    const raw = await readBody(req, res, options.maxMessageBytes);
    if (raw === undefined) {
      const message = `Request too large: over limits.maxMessageBytes (${options.maxMessageBytes} bytes)`;
      return json(res, { jsonrpc: '2.0', id: null, error: { code: -32600, message } }, 413);
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return json(res, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    }
    if (tooDeep(body))
      return json(res, { jsonrpc: '2.0', id: null, error: { code: -32600, message: TOO_DEEP } });
    const refused = envelopeError(body);
    if (refused) return json(res, refused);
    const version = req.headers[A2A_VERSION_HEADER.toLowerCase()];
    const context = agentContext(
      new AgentUser(caller, originOf(req)),
      typeof version === 'string' ? version : undefined,
    );
    try {
      validateVersion(context.requestedVersion, await handler.getAgentCard(), 'JSONRPC');
    } catch (err) {
      const mapped = JsonRpcTransportHandler.mapToJSONRPCError(err);
      return json(res, {
        jsonrpc: '2.0',
        id: (body.id as string | number | undefined) ?? null,
        error: mapped,
      });
    }
    const answer = await transport.handle(body, context);
    if (!(Symbol.asyncIterator in answer)) return json(res, answer);
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    // A client going away stops the writing, not the reading: the SDK saves the task's events only
    // as this stream is read, so a stream given up would leave the task 'working' for good, its
    // result lost though its call finished. Read to its end, the task is kept whole for
    // GetTask and SubscribeToTask (the stream ends with the task, or where it waits for an answer).
    let gone = false;
    res.once('close', () => (gone = true));
    try {
      for await (const event of answer) {
        if (!gone) res.write(`data: ${JSON.stringify(event)}\n\n`);
      }
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'a2a stream failed');
      const error = JsonRpcTransportHandler.mapToJSONRPCError(err);
      if (!gone)
        res.write(
          `event: error\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: body.id ?? null, error })}\n\n`,
        );
    }
    res.end();
  }

  return async (req, res, path, authenticate) => {
    if (path === AGENT_CARD_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
      await card(req, res, authenticate);
      return true;
    }
    if (path === settings.path) {
      await rpc(req, res, authenticate);
      return true;
    }
    if (rest.owns(path)) {
      await restCall(req, res, authenticate);
      return true;
    }
    return false;
  };

  async function restCall(
    req: IncomingMessage,
    res: ServerResponse,
    authenticate: Authenticate,
  ): Promise<void> {
    const host = await authenticate(req, res);
    if (!host) return;
    const raw = await readBody(req, res, options.maxMessageBytes);
    if (raw === undefined) return restError(res, 413, 'RESOURCE_EXHAUSTED', 'Request too large');
    let body: unknown;
    try {
      body = raw.trim() ? JSON.parse(raw) : undefined;
    } catch {
      return restError(res, 400, 'INVALID_ARGUMENT', 'The body is not JSON');
    }
    if (tooDeep(body)) return restError(res, 400, 'INVALID_ARGUMENT', TOO_DEEP);
    await rest.serve(req, res, new AgentUser(agentOf(host), originOf(req)), body);
  }
}

/**
 * A body nested past the depth every door of switchboard holds messages to: refused as it arrives,
 * before the SDK, a skill's arguments or an answer to a question (which goes to a backend as it
 * is) could carry it further.
 */
const tooDeep = (body: unknown): boolean => nestsDeeperThan(body, MAX_MESSAGE_DEPTH);
const TOO_DEEP = `The request nests deeper than ${MAX_MESSAGE_DEPTH} levels`;

/** An error in the HTTP+JSON binding's shape (google.rpc.Status under `error`). */
function restError(res: ServerResponse, code: number, status: string, message: string): void {
  res
    .writeHead(code, { 'content-type': 'application/json' })
    .end(JSON.stringify({ error: { code, status, message } }));
}

function emptyCard({ settings, authenticated, pushNotifications }: CardOptions): AgentCard {
  return {
    name: settings.name,
    description: settings.description,
    supportedInterfaces: interfacesAt('', settings),
    provider: undefined,
    version: '',
    capabilities: {
      streaming: true,
      pushNotifications,
      extendedAgentCard: authenticated,
      extensions: [],
    },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: [],
    defaultOutputModes: [],
    skills: [],
    signatures: [],
  };
}

function json(res: ServerResponse, body: unknown, status = 200): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** The methods of the JSON-RPC binding the SDK's transport serves. */
const A2A_METHODS = new Set([
  'SendMessage',
  'SendStreamingMessage',
  'GetTask',
  'ListTasks',
  'CancelTask',
  'SubscribeToTask',
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'DeleteTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'GetExtendedAgentCard',
]);

/**
 * The JSON-RPC error for a body that is not one request of a known method, with the code JSON-RPC
 * gives it (-32600, -32601): the SDK reads the params first and calls both invalid params.
 */
function envelopeError(body: unknown): object | undefined {
  const invalid = (id: unknown, message: string) => ({
    jsonrpc: '2.0',
    id: typeof id === 'string' || typeof id === 'number' ? id : null,
    error: { code: -32600, message: `Invalid Request: ${message}` },
  });
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return invalid(null, 'expected one JSON-RPC request object (batches are not supported)');
  const { jsonrpc, id, method } = body as Record<string, unknown>;
  if (jsonrpc !== '2.0') return invalid(id, 'jsonrpc must be "2.0"');
  // Larger integers were rounded by JSON.parse: the answer would carry another id.
  if (id !== undefined && id !== null && typeof id !== 'string' && !Number.isSafeInteger(id))
    return invalid(null, 'id must be a string or an integer within ±(2^53 - 1)');
  if (typeof method !== 'string') return invalid(id, 'method must be a string');
  if (!A2A_METHODS.has(method))
    return {
      jsonrpc: '2.0',
      id: id ?? null,
      error: { code: -32601, message: `Method not found: ${method}` },
    };
  return undefined;
}

/** The request's body as text, or undefined when it is larger than `max` bytes (the connection then closes). */
async function readBody(req: IncomingMessage, res: ServerResponse, max: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) {
      // Not read to its end: the connection closes with the answer, or the rest of the body
      // would be read as the client's next request.
      res.setHeader('connection', 'close');
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
