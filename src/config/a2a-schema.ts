// Schema of the `a2a:` section: switchboard served as an A2A agent on the HTTP front.
import { z } from 'zod';

export const A2AServe = z
  .object({
    enabled: z
      .boolean()
      .default(false)
      .describe('Serve switchboard as an A2A agent on the HTTP front (its card and its JSON-RPC endpoint).'),
    path: z
      .string()
      .regex(/^\/[A-Za-z0-9/_.-]*$/, 'an absolute URL path')
      .default('/a2a')
      .describe('The A2A JSON-RPC endpoint on the HTTP front; the card is at /.well-known/agent-card.json.'),
    name: z.string().min(1).default('switchboard').describe('The agent card’s name.'),
    description: z
      .string()
      .default('The tools this switchboard fronts, as A2A skills.')
      .describe('The agent card’s description.'),
  })
  .strict()
  .prefault({});

export const A2ASection = z
  .object({
    serve: A2AServe,
  })
  .strict()
  .prefault({})
  .describe(
    'A2A (agent-to-agent protocol): switchboard as an agent. Remote agents as backends are servers entries with `a2a:`.',
  );
