// Bundled example server "notes": an in-memory notebook with tools, a resource per note and a
// prompt. `switchboard up` fronts it out of the box so a newcomer sees a catalog at once. A note's
// URI carries its title in the path (notes:///Title): a URI's host part is case-insensitive, and a
// gateway may lower-case it.
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const notes = new Map<string, string>([
  ['welcome', 'Switchboard fronts this server and the clock server as one.'],
]);

const noteUri = (title: string) => `notes:///${encodeURIComponent(title)}`;

/**
 * Whether a title's URI reads back: a resource URI is judged (and forwarded) in normal form, which
 * refuses a path percent-encoded twice (a title's own `%41` becomes `%2541`) and a `.` or `..`
 * segment hidden behind an encoded `/` or `\`.
 */
const readableTitle = (title: string) =>
  !/%[0-9A-Fa-f]{2}/.test(title) && !title.split(/[\\/]/).some((part) => part === '.' || part === '..');

function createServer(): McpServer {
  const server = new McpServer(
    { name: 'notes', version: '1.0.0' },
    { instructions: 'Keep short notes; read them back as notes:///{title} resources.' },
  );
  server.registerTool(
    'add_note',
    {
      description: 'Store a note under a title (replaces a note of the same title).',
      inputSchema: z.object({
        title: z.string().min(1).refine(readableTitle, {
          message: 'a title may not hold a %XX escape, or . or .. between slashes: its URI could not be read',
        }),
        text: z.string(),
      }),
    },
    async ({ title, text }) => {
      notes.set(title, text);
      server.sendResourceListChanged();
      return {
        content: [{ type: 'resource_link', uri: noteUri(title), name: title }],
      };
    },
  );
  server.registerTool(
    'list_notes',
    { description: 'List the titles of all notes.', annotations: { readOnlyHint: true } },
    async () => ({ content: [{ type: 'text', text: [...notes.keys()].join('\n') || '(no notes)' }] }),
  );
  server.registerResource(
    'note',
    new ResourceTemplate('notes:///{title}', {
      list: async () => ({
        resources: [...notes.keys()].map((t) => ({
          uri: noteUri(t),
          name: t,
          mimeType: 'text/plain',
        })),
      }),
    }),
    { description: 'One note, by title.', mimeType: 'text/plain' },
    async (uri, { title }) => {
      const key = decodeURIComponent(String(title));
      const text = notes.get(key);
      if (text === undefined) throw new Error(`no note titled ${key}`);
      return { contents: [{ uri: uri.href, mimeType: 'text/plain', text }] };
    },
  );
  server.registerPrompt('summarize_notes', { description: 'Ask the model to summarize every note.' }, () => ({
    messages: [
      {
        role: 'user',
        content: {
          type: 'text',
          text: `Summarize these notes:\n\n${[...notes].map(([t, x]) => `# ${t}\n${x}`).join('\n\n')}`,
        },
      },
    ],
  }));
  return server;
}

serveStdio(createServer);
