// The part of express 5 switchboard uses: an app is a node:http request handler that mounts the
// A2A SDK's REST router. Express ships no types of its own; this covers what src/a2a/rest.ts calls.
declare module 'express' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export type Request = IncomingMessage;
  export type Response = ServerResponse;
  export type NextFunction = (err?: unknown) => void;
  export type RequestHandler = (req: Request, res: Response, next: NextFunction) => unknown;

  export interface Express {
    (req: IncomingMessage, res: ServerResponse, next: NextFunction): void;
    use(path: string, handler: RequestHandler): Express;
    disable(setting: string): Express;
  }

  export default function express(): Express;
}
