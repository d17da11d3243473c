// Generates schema/switchboard.schema.json from the zod schema, so editors complete and check config files.
// Regenerate after changing the schema (schema.ts and the *-schema.ts beside it):
//   npx tsc -p . && node dist/src/config/json-schema.js > schema/switchboard.schema.json
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { Config, HttpBackend } from './schema.js';

/** The JSON Schema of what may be written in a file (the input side: keys with defaults are optional). */
export function configJsonSchema(): Record<string, unknown> {
  // draft-07 rather than zod's default 2020-12: the YAML language server and older editors read it fully.
  const schema = z.toJSONSchema(Config, {
    io: 'input',
    target: 'draft-7',
    // zod's own check (exactly one of url and urls) has no JSON Schema form: say it here.
    override: (ctx) => {
      if (ctx.zodSchema === HttpBackend)
        ctx.jsonSchema.oneOf = [{ required: ['url'] }, { required: ['urls'] }];
    },
  }) as Record<string, unknown>;
  const properties = schema['properties'] as Record<string, unknown>;
  return {
    $schema: schema['$schema'],
    title: 'Switchboard configuration',
    description:
      'Configuration of switchboard (mcp-switchboard), the MCP gateway. See docs/configuration.md.',
    ...schema,
    // A JSON config file may name its schema for the editor, and a YAML one may keep anchors under
    // `x-` keys: the loader ignores both, so the schema must not flag them.
    properties: {
      $schema: { type: 'string', description: 'Where editors find this schema.' },
      ...properties,
    },
    patternProperties: { '^x-': { description: 'Ignored: a place for YAML anchors.' } },
  };
}

/** The exact text committed as schema/switchboard.schema.json. */
export function renderConfigJsonSchema(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}

const entry = process.argv[1];
if (entry !== undefined && realpathSync(entry) === fileURLToPath(import.meta.url)) {
  process.stdout.write(renderConfigJsonSchema());
}
