// A remote agent's published input schemas as tool schemas: nested under `data`, a schema's
// definitions still resolve (its `#/$defs/…` references are written from its own root).
import assert from 'node:assert/strict';
import test from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { AgentCard, AgentSkill } from '@a2a-js/sdk';
import { SCHEMAS_EXTENSION } from '../../src/a2a/card.js';
import { skillsToTools } from '../../src/a2a/skill-tools.js';

const skill = (id: string, inputModes: string[]): AgentSkill => ({
  id,
  name: id,
  description: '',
  tags: [],
  examples: [],
  inputModes,
  outputModes: [],
  securityRequirements: [],
});

test('a published schema with $defs and definitions keeps its references resolvable under data', () => {
  const published = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { point: { $ref: '#/$defs/point' }, colour: { $ref: '#/definitions/colour' } },
    required: ['point'],
    $defs: { point: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] } },
    definitions: { colour: { enum: ['red', 'green'] } },
  };
  const card = {
    name: 'peer',
    defaultInputModes: ['text/plain'],
    capabilities: {
      extensions: [{ uri: SCHEMAS_EXTENSION, params: { inputSchemas: { draw: published, say: published } } }],
    },
    skills: [skill('draw', ['application/json']), skill('say', ['text/plain'])],
  } as unknown as AgentCard;
  const ajv = new Ajv2020({ strict: false });
  for (const tool of skillsToTools(card).tools) {
    const validate = ajv.compile(tool.inputSchema as object);
    const message = tool.name === 'say' ? { message: 'hi' } : {};
    assert.ok(
      validate({ ...message, data: { point: { x: 1 }, colour: 'red' } }),
      `${String(tool.name)} valid`,
    );
    assert.ok(
      !validate({ ...message, data: { point: { x: 'one' } } }),
      `${String(tool.name)}: the $ref applies`,
    );
    assert.ok(
      !validate({ ...message, data: { point: { x: 1 }, colour: 'blue' } }),
      `${String(tool.name)}: definitions too`,
    );
  }
});
