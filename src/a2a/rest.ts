// The A2A HTTP+JSON (REST) binding of switchboard as an agent: the SDK's express router, mounted
// at a2a.serve.restPath and run as a plain node:http handler inside the HTTP front's A2A route.
// The front authenticates the request first; the router's UserBuilder only reads the caller the
// front proved (kept per request object), never a header, so it cannot be told who it serves.
import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { restHandler } from '@a2a-js/sdk/server/express';
import { AgentUser, agentContext } from './agent-context.js';

export interface RestBinding {
  /** Whether `path` is one of the binding's (its base path or under it). */
  owns(path: string): boolean;
  /** Serves one request whose user the front authenticated, once its body was read (undefined: none). */
  serve(req: IncomingMessage, res: ServerResponse, user: AgentUser, body: unknown): Promise<void>;
}

export function restBinding(handler: A2ARequestHandler, base: string): RestBinding {
  const users = new WeakMap<object, AgentUser>();
  const app = express();
  app.disable('x-powered-by');
  app.use(
    base,
    restHandler({
      requestHandler: handler,
      // Only what the front proved: a request that reached here without it is refused.
      userBuilder: (req) => {
        const user = users.get(req);
        return user ? Promise.resolve(user) : Promise.reject(new Error('the request was not authenticated'));
      },
      // One tenant, the card's (''): a tenant in the path is not the caller's to choose, and each
      // new one would hold state of its own in the SDK (its event buses) for as long as it runs.
      contextBuilder: ({ user, requestedVersion, extensions }) =>
        agentContext(user as AgentUser, requestedVersion, { tenant: '', extensions }),
    }),
  );
  return {
    owns: (path) => path === base || path.startsWith(`${base}/`),
    serve: (req, res, user, body) =>
      new Promise<void>((resolve) => {
        users.set(req, user);
        // The body is read already (within the front's size limit): the router's JSON parser sees
        // a finished request and keeps req.body as given.
        if (body !== undefined) (req as IncomingMessage & { body?: unknown }).body = body;
        res.once('close', () => resolve());
        // An express app is a node:http handler; its types only take a third argument (the
        // fall-through, answered here as JSON) with express's own request and response types.
        app(req as express.Request, res as express.Response, () => {
          if (!res.headersSent)
            res
              .writeHead(404, { 'content-type': 'application/json' })
              .end(
                JSON.stringify({ error: { code: 404, status: 'NOT_FOUND', message: 'No such A2A route' } }),
              );
        });
      }),
  };
}
