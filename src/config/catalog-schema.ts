// Schemas of how the catalog is shown to callers: its mode (the full list, or search meta-tools)
// and profiles, named subsets of the catalog served at their own endpoint (/mcp/<profile>, stdio
// --profile), each with its own mode and, optionally, the credentials that may use it.
import { z } from 'zod';

export const CatalogMode = z
  .enum(['full', 'search'])
  .describe(
    'full: tools/list gives every tool the caller may see. search: it gives three meta-tools (search_tools, describe_tools, call_tool) and the always-visible tools; the rest are found by search and called by name.',
  );

/** Without a default: a profile that leaves it unset takes the catalog's (see Profile). */
const SearchFields = z
  .object({
    alwaysVisible: z
      .array(z.string().min(1))
      .default([])
      .describe(
        'Exposed tool names (glob patterns with *) listed as themselves beside the meta-tools in search mode.',
      ),
    limit: z
      .number()
      .int()
      .min(1)
      .max(50)
      .default(8)
      .describe('How many tools search_tools answers with when the caller gives no limit.'),
  })
  .strict();

export const SearchSettings = SearchFields.prefault({});

const CodeModeFields = z
  .object({
    enabled: z
      .boolean()
      .default(false)
      .describe(
        'List run_script: a meta-tool that runs a short JavaScript script with the visible tools bound.',
      ),
    cpuMs: z
      .number()
      .int()
      .min(1)
      .max(60_000)
      .default(1_000)
      .describe('CPU time a script may run (waiting on tools not counted), in milliseconds.'),
    wallMs: z
      .number()
      .int()
      .min(1)
      .max(600_000)
      .default(30_000)
      .describe('Time a script may take from start to end, waiting on tools included, in milliseconds.'),
    memoryMb: z
      .number()
      .int()
      .min(1)
      .max(512)
      .default(32)
      .describe(
        "The script's heap limit, in MiB; the interpreter's whole memory is capped at this plus 6 MiB (at least 20 MiB).",
      ),
    stackKb: z
      .number()
      .int()
      .min(64)
      .max(384)
      .default(256)
      .describe("The script's stack limit, in KiB (kept below the host's own stack)."),
    maxToolCalls: z.number().int().min(0).max(10_000).default(50).describe('Tool calls one script may make.'),
    maxOutputBytes: z
      .number()
      .int()
      .min(256)
      .max(10_000_000)
      .default(65_536)
      .describe("Bytes of a script's console output and return value together."),
  })
  .strict();

export const CodeModeSettings = CodeModeFields.prefault({});

const ServersOnly = z
  .object({
    servers: z
      .array(z.string().min(1))
      .optional()
      .describe("Servers whose items the profile shows; unset: the profile's servers."),
  })
  .strict();

export const Profile = z
  .object({
    servers: z
      .array(z.string().min(1))
      .optional()
      .describe('Servers whose tools, prompts and resources the profile shows; unset: every server.'),
    tools: z
      .object({
        include: z
          .array(z.string().min(1))
          .optional()
          .describe('Exposed tool names (glob patterns with *) the profile shows; unset: all.'),
        exclude: z
          .array(z.string().min(1))
          .default([])
          .describe('Exposed tool names (glob patterns with *) the profile hides, even if included.'),
      })
      .strict()
      .prefault({})
      .describe('Which tools of those servers the profile shows.'),
    annotations: z
      .record(z.string(), z.union([z.boolean(), z.string(), z.number()]))
      .optional()
      .describe(
        'Tool annotations a tool must carry with these values to be shown (e.g. readOnlyHint: true); a tool without the annotation is not shown.',
      ),
    prompts: ServersOnly.optional().describe('Which servers\u2019 prompts the profile shows.'),
    resources: ServersOnly.optional().describe(
      "Which servers' resources and resource templates the profile shows.",
    ),
    mode: CatalogMode.optional().describe("The profile's mode; unset: catalog.mode."),
    search: SearchFields.optional().describe("The profile's search settings; unset: catalog.search."),
    codeMode: CodeModeFields.optional().describe(
      "The profile's code mode (run_script); unset: catalog.codeMode.",
    ),
    credentials: z
      .object({
        keys: z
          .array(z.string().min(1))
          .default([])
          .describe('API key names (http.auth.keys) that may use it.'),
        subjects: z
          .array(z.string().min(1))
          .default([])
          .describe('OAuth token subjects (sub) that may use it.'),
      })
      .strict()
      .optional()
      .describe(
        'Who may use the profile over HTTP; unset: whoever may use the endpoint. Any other caller is refused with 403.',
      ),
  })
  .strict();

export const PROFILE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export const CatalogViewFields = {
  mode: CatalogMode.default('full'),
  search: SearchSettings,
  codeMode: CodeModeSettings.describe(
    'Code mode: a run_script meta-tool running a JavaScript script (QuickJS in WebAssembly) with the tools bound.',
  ),
  profiles: z
    .record(z.string().regex(PROFILE_NAME, 'a name of letters, digits, _ - (at most 64)'), Profile)
    .default({})
    .describe(
      'Named subsets of the catalog, each served at <http.path>/<name> and by `up --stdio --profile <name>`.',
    ),
};

export type ProfileConfig = z.output<typeof Profile>;
export type SearchConfig = z.output<typeof SearchSettings>;
export type CodeModeConfig = z.output<typeof CodeModeSettings>;

/** Profiles naming a server the config does not have: such a profile would silently show nothing of it. */
export function profileIssues(
  catalog: { profiles: Record<string, ProfileConfig> },
  servers: Record<string, unknown>,
): { path: (string | number)[]; message: string }[] {
  const issues: { path: (string | number)[]; message: string }[] = [];
  for (const [name, p] of Object.entries(catalog.profiles)) {
    const lists: [string, string[] | undefined][] = [
      ['servers', p.servers],
      ['prompts.servers', p.prompts?.servers],
      ['resources.servers', p.resources?.servers],
    ];
    for (const [where, list] of lists)
      list?.forEach((s, i) => {
        if (!Object.hasOwn(servers, s))
          issues.push({
            path: ['catalog', 'profiles', name, ...where.split('.'), i],
            message: `names no server in servers ("${s}")`,
          });
      });
  }
  return issues;
}
