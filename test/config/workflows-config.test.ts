// The workflows section is checked whole at load: a CEL syntax error, an unknown or cyclic need,
// a workflow cycle and a bad input schema are config errors naming the file and the path.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/errors.js';
import { parseConfig } from '../../src/config/load.js';

function problems(workflows: unknown): string {
  try {
    parseConfig(JSON.stringify({ workflows }), 'sb.json');
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.message;
  }
  return '';
}

test('expressions are compiled at load: a syntax error names its path', () => {
  const msg = problems({ w: { steps: [{ id: 'a', tool: 't', args: { x: { y: 'input.(' } } }] } });
  assert.match(
    msg,
    /^sb\.json: workflows\.w\.steps\[0\]\.args\.x\.y: a CEL expression \(Expected IDENTIFIER/m,
  );
  assert.match(
    problems({ w: { steps: [{ id: 'a', tool: 't', if: '1 +' }] } }),
    /workflows\.w\.steps\[0\]\.if: a CEL expression/,
  );
});

test('unknown needs, cycles of needs and of workflows, and step kinds are refused', () => {
  assert.match(
    problems({ w: { steps: [{ id: 'a', tool: 't', needs: ['nope'] }] } }),
    /workflows\.w\.steps\[0\]\.needs\[0\]: the id of a step of this workflow \("nope" is none\)/,
  );
  assert.match(
    problems({
      w: {
        steps: [
          { id: 'a', tool: 't', needs: ['b'] },
          { id: 'b', tool: 't', needs: ['a'] },
        ],
      },
    }),
    /steps that do not need each other in a cycle \(a -> b -> a\)/,
  );
  assert.match(
    problems({ w: { steps: [{ id: 'a', workflow: 'v' }] }, v: { steps: [{ id: 'b', workflow: 'w' }] } }),
    /workflows that run each other in a cycle/,
  );
  assert.match(
    problems({ w: { steps: [{ id: 'a', tool: 't', handler: 'vault.sign' }] } }),
    /exactly one of tool, resource/,
  );
  assert.match(
    problems({ w: { input: { type: 'nonsense' }, steps: [{ id: 'a', tool: 't' }] } }),
    /workflows\.w\.input: a valid JSON Schema/,
  );
  assert.equal(problems({ w: { steps: [{ id: 'a', tool: 't', args: { n: 'input.n + 1' } }] } }), '');
});
