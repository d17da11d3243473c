// Schema of the `a2a:` section: switchboard served as an A2A agent on the HTTP front.
import { z } from 'zod';

/** Why `text` cannot be a webhook allow-list entry, or undefined when it can. */
function webhookPrefixProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'an absolute http:// or https:// URL (an origin, or an origin and a path prefix)';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return `http:// or https://, not ${url.protocol}//`;
  if (url.username || url.password) return 'no user or password in the URL';
  if (url.search || url.hash || text.includes('?') || text.includes('#')) return 'no query or fragment';
  return undefined;
}

const WebhookPrefix = z.string().superRefine((text, ctx) => {
  const problem = webhookPrefixProblem(text);
  if (problem) ctx.addIssue({ code: 'custom', message: `expected ${problem}, got ${JSON.stringify(text)}` });
});

const WebhookAllow = z.union([
  WebhookPrefix,
  z
    .object({
      url: WebhookPrefix,
      privateNetwork: z
        .boolean()
        .default(false)
        .describe(
          "Let this entry's host name resolve to a private, link-local or loopback address (a webhook inside your network).",
        ),
    })
    .strict(),
]);

export const A2APushNotifications = z
  .object({
    enabled: z
      .boolean()
      .default(false)
      .describe(
        'Offer A2A push notifications: clients register webhooks for their tasks and switchboard POSTs task updates to them.',
      ),
    allow: z
      .array(WebhookAllow)
      .default([])
      .describe(
        'The webhook URLs clients may register: each an origin (https://hooks.example.com) or an origin and a path prefix (https://hooks.example.com/a2a/). Scheme, host and port must match exactly; http:// only where an entry says http://. A host that resolves to a private address is refused unless the entry names it as a literal address or localhost, or says privateNetwork: true.',
      ),
    timeoutMs: z
      .number()
      .int()
      .min(100)
      .max(120_000)
      .default(10_000)
      .describe('How long one webhook request may take before it is given up.'),
    retries: z
      .number()
      .int()
      .min(0)
      .max(10)
      .default(3)
      .describe(
        'How many more times an update is sent when its webhook could not be reached, gave no answer within timeoutMs, or answered 408, 425, 429 or 5xx (the updates after it wait, in order); 0: never again. Other answers are final.',
      ),
    retryDelayMs: z
      .number()
      .int()
      .min(100)
      .max(60_000)
      .default(1_000)
      .describe(
        "The wait before an update's first retry; each next waits about twice as long (jittered), at most 60 s. A webhook's Retry-After is waited for too, up to 60 s.",
      ),
    maxConfigsPerTask: z
      .number()
      .int()
      .min(1)
      .max(100)
      .default(5)
      .describe(
        'How many push-notification configs one task may have (each is one webhook request per update).',
      ),
  })
  .strict()
  .refine((p) => !p.enabled || p.allow.length > 0, {
    message:
      'push notifications are enabled with an empty allow list: every webhook would be refused; list the webhook URLs clients may register',
    path: ['allow'],
  })
  .prefault({})
  .describe("Push notifications of the agent's tasks to clients' webhooks; off unless enabled.");

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
    restPath: z
      .string()
      .regex(/^\/[A-Za-z0-9/_.-]*[A-Za-z0-9_.-]$/, 'an absolute URL path, not ending in /')
      .default('/a2a/rest')
      .describe(
        'Base path of the A2A HTTP+JSON (REST) binding on the HTTP front, beside the JSON-RPC endpoint: POST <restPath>/message:send, GET <restPath>/tasks/<id>, ….',
      ),
    tasks: z
      .object({
        path: z
          .string()
          .min(1)
          .optional()
          .describe(
            "SQLite file of the agent's tasks, kept across restarts (default: $XDG_STATE_HOME/switchboard/a2a-tasks.sqlite, else ~/.local/state/switchboard/a2a-tasks.sqlite). Hidden from sandboxed backends.",
          ),
        keepMs: z
          .number()
          .int()
          .min(0)
          .default(7 * 24 * 60 * 60_000)
          .describe(
            'How long a finished task (completed, failed, canceled, rejected) is kept after its last status change; then it is deleted. 0 keeps every task.',
          ),
      })
      .strict()
      .prefault({})
      .describe('Where switchboard keeps its tasks as an agent.'),
    pushNotifications: A2APushNotifications,
  })
  .strict()
  .refine((s) => s.restPath !== s.path, {
    message: 'restPath must differ from path (the JSON-RPC endpoint)',
    path: ['restPath'],
  })
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

/**
 * Where the agent's paths would take requests meant for the MCP endpoint: its routes are tried
 * first on the HTTP front, so an A2A path that is the MCP path, lies under it (a profile's
 * endpoint) or holds it under the REST base would make the MCP endpoint unreachable.
 */
export function a2aPathIssues(
  serve: z.output<typeof A2AServe>,
  mcpPath: string,
): { path: (string | number)[]; message: string }[] {
  if (!serve.enabled) return [];
  const under = (path: string, base: string) =>
    path === base || path.startsWith(`${base.replace(/\/$/, '')}/`);
  const issues: { path: (string | number)[]; message: string }[] = [];
  if (under(serve.path, mcpPath))
    issues.push({
      path: ['a2a', 'serve', 'path'],
      message: `${serve.path} is the MCP endpoint (http.path ${mcpPath}) or under it; give the A2A endpoint a path of its own`,
    });
  if (under(serve.restPath, mcpPath) || under(mcpPath, serve.restPath))
    issues.push({
      path: ['a2a', 'serve', 'restPath'],
      message: `${serve.restPath} and the MCP endpoint (http.path ${mcpPath}) overlap: the REST binding answers every path under it; give it a base of its own`,
    });
  return issues;
}

/**
 * Push notifications need callers the front tells apart: a webhook config holds its owner's
 * credential for the webhook, and every caller of a front that authenticates no one is the same
 * owner, so any of them could list every task's configs and read those credentials.
 */
export function a2aPushIssues(
  serve: z.output<typeof A2AServe>,
  authMode: string,
): { path: (string | number)[]; message: string }[] {
  const oneCaller = authMode === 'none' || authMode === 'local';
  if (!serve.enabled || !serve.pushNotifications.enabled || !oneCaller) return [];
  return [
    {
      path: ['a2a', 'serve', 'pushNotifications', 'enabled'],
      message: `push notifications need callers told apart, and http.auth (mode ${authMode}) makes every caller the one caller http: each could read every webhook config and its credentials. Configure http.auth.keys or http.auth.oauth, or turn a2a.serve.pushNotifications.enabled off`,
    },
  ];
}
