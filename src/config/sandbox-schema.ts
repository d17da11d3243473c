// Schemas of the sandbox settings: the top-level `sandbox:` section (how stdio backends are
// contained, and the view every one of them gets) and a backend's own `sandbox:` (opt out, or widen).
import { z } from 'zod';

const Paths = (what: string) => z.array(z.string().min(1)).default([]).describe(what);

const ViewFields = {
  read: Paths(
    'Paths bound read-only into the view (the root is read-only already; this re-exposes paths under /tmp).',
  ),
  write: Paths('Directories bound read-write into the view; each is made (owner-only) when missing.'),
  hide: Paths(
    "Paths replaced by an empty directory (a directory) or an empty read-only file (a file) in the view, on top of switchboard's own files.",
  ),
};

export const SandboxSection = z
  .object({
    mode: z
      .enum(['auto', 'required', 'none'])
      .default('auto')
      .describe(
        'auto: run stdio backends in a bubblewrap sandbox where one can be made (Linux with bwrap), otherwise run them as they are and say so once; required: refuse to start without a sandbox; none: never sandbox (logged).',
      ),
    bwrap: z
      .string()
      .min(1)
      .default('bwrap')
      .describe('The bubblewrap executable: a path, or a name looked up in PATH.'),
    network: z
      .boolean()
      .default(true)
      .describe(
        'Whether sandboxed backends share the network (false: a network namespace of their own, loopback only).',
      ),
    ...ViewFields,
  })
  .strict()
  .prefault({})
  .describe(
    'How stdio backends are contained (Linux, bubblewrap): own PID namespace, private /tmp, read-only root, switchboard files absent. See docs/sandbox.md.',
  );

export const BackendSandbox = z
  .union([
    z.literal('none').describe('Run this backend outside the sandbox (logged as a warning at start).'),
    z
      .object({
        network: z.boolean().optional().describe('Overrides sandbox.network for this backend.'),
        ...ViewFields,
      })
      .strict(),
  ])
  .optional()
  .describe(
    'This backend in the sandbox: none to opt out, or paths added to the top-level read, write and hide lists.',
  );

export type SandboxSection = z.output<typeof SandboxSection>;
export type BackendSandbox = z.output<typeof BackendSandbox>;
