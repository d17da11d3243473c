// The Python bridge client (clients/python), run by python3 as a child process against a protocol double.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startBridgeDouble, type BridgeDouble } from './bridge-double.js';
import { expectedSignature, startRealBridge, type RealBridge } from './real-switchboard.js';

type Json = Record<string, unknown>;

/** The source tree's clients/python, from dist/test/bridge or test/bridge alike. */
const PYTHON_CLIENT_DIR = fileURLToPath(
  new URL(
    import.meta.url.includes('/dist/') ? '../../../clients/python' : '../../clients/python',
    import.meta.url,
  ),
);

/** Runs a Python snippet with the client importable; resolves with the JSON it prints last. */
function runPython(script: string, env: NodeJS.ProcessEnv): Promise<Json> {
  return new Promise((resolve, reject) => {
    execFile(
      'python3',
      ['-c', script],
      {
        env: { PATH: process.env.PATH, PYTHONPATH: PYTHON_CLIENT_DIR, PYTHONDONTWRITEBYTECODE: '1', ...env },
      },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`python3 failed: ${err.message}\n${stderr}`));
        const last = stdout.trim().split('\n').pop() ?? '';
        try {
          resolve(JSON.parse(last) as Json);
        } catch {
          reject(new Error(`python3 printed no JSON:\n${stdout}\n${stderr}`));
        }
      },
    );
  });
}

const PRELUDE = `
import json, sys, threading
from switchboard_bridge import Bridge, BridgeError, CHAIN_META_KEY
def err(e):
    return {"code": e.code, "message": e.message, "data": e.data}
out = {}
`;

describe('python bridge client', () => {
  let double: BridgeDouble;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    double = await startBridgeDouble({ identity: 'py' });
    env = { SWITCHBOARD_BRIDGE: double.path, SWITCHBOARD_BRIDGE_TOKEN: double.token };
  });
  after(() => double.close());

  test('authenticates from the environment, lists tools, calls tools and handlers', async () => {
    const out = await runPython(
      PRELUDE +
        `
with Bridge().connect() as b:
    out["identity"] = b.identity
    out["tools"] = [t["name"] for t in b.list_tools()]
    chain = {"id": "c1", "path": ["alpha"]}
    r = b.call_tool("echo", {"x": 1}, parent_meta={CHAIN_META_KEY: chain, "progressToken": 5})
    out["echo"] = json.loads(r["content"][0]["text"])
    out["handler"] = b.call("test.echo", {"k": "v"})
    try:
        b.call("test.fail")
    except BridgeError as e:
        out["fail"] = err(e)
    try:
        b.call_tool("nope")
    except BridgeError as e:
        out["unknown"] = err(e)
    seen = []
    b.call_tool("progress", on_progress=lambda p: seen.append(p["progress"]))
    out["progress"] = seen
print(json.dumps(out))
`,
      env,
    );
    assert.equal(out.identity, 'py');
    assert.deepEqual(out.tools, ['echo', 'slow', 'progress', 'hold', 'ask']);
    assert.deepEqual(out.echo, {
      args: { x: 1 },
      meta: { 'io.switchboard/chain': { id: 'c1', path: ['alpha'] } },
    });
    assert.deepEqual(out.handler, { k: 'v' });
    assert.deepEqual(out.fail, {
      code: -32031,
      message: 'Call cycle: a -> b -> a',
      data: { path: ['a', 'b'] },
    });
    assert.deepEqual(out.unknown, { code: -32602, message: 'Unknown tool: nope', data: null });
    assert.deepEqual(out.progress, [1, 2]);
  });

  test('keeps many requests from many threads in flight on one connection', async () => {
    const out = await runPython(
      PRELUDE +
        `
n = 20
b = Bridge().connect()
results = [None] * n
def worker(i):
    r = b.call_tool("hold", {"i": i})
    results[i] = json.loads(r["content"][0]["text"])
threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
for t in threads: t.start()
b.call("test.release", {"count": n})
for t in threads: t.join()
b.close()
out["results"] = results
print(json.dumps(out))
`,
      env,
    );
    assert.deepEqual(
      out.results,
      Array.from({ length: 20 }, (_, i) => ({ i })),
    );
  });

  test('cancels a request whose timeout expires', async () => {
    const cancelled = new Promise<unknown>((resolve) => double.events.once('cancelled', resolve));
    const out = await runPython(
      PRELUDE +
        `
with Bridge().connect() as b:
    try:
        b.call_tool("slow", timeout=0.05)
    except BridgeError as e:
        out["timeout"] = e.code
    out["ping"] = b.request("ping")
print(json.dumps(out))
`,
      env,
    );
    assert.equal(out.timeout, 'timeout');
    assert.deepEqual(out.ping, {});
    assert.equal(typeof (await cancelled), 'number');
  });

  test('answers server requests with -32601 unless on_request serves them', async () => {
    const out = await runPython(
      PRELUDE +
        `
with Bridge().connect() as b:
    try:
        b.call_tool("ask")
    except BridgeError as e:
        out["default"] = e.code
    b.on_request = lambda method, params: {"method": method}
    out["served"] = json.loads(b.call_tool("ask")["content"][0]["text"])
print(json.dumps(out))
`,
      env,
    );
    assert.equal(out.default, -32601);
    assert.deepEqual(out.served, { method: 'sampling/createMessage' });
  });

  test('fails clearly: wrong token, no environment, no socket', async () => {
    const out = await runPython(
      PRELUDE +
        `
import os
for name, args in [("wrong", {"token": "wrong"}), ("absent", {"path": "/nonexistent/bridge.sock"})]:
    try:
        Bridge().connect(**args)
    except BridgeError as e:
        out[name] = err(e)
del os.environ["SWITCHBOARD_BRIDGE"]
try:
    Bridge().connect()
except BridgeError as e:
    out["unset"] = e.code
print(json.dumps(out))
`,
      env,
    );
    assert.deepEqual(out.wrong, { code: -32030, message: 'Authentication failed', data: null });
    assert.equal((out.absent as Json).code, 'unavailable');
    assert.equal(out.unset, 'not_configured');
  });
});

describe('python bridge client against a real switchboard', () => {
  let real: RealBridge;
  before(async () => {
    real = await startRealBridge();
  });
  after(() => real.stop());

  test('authenticates as its backend, lists tools, calls a real tool and a handler, and is loop-guarded', async () => {
    // Runs inside the caller backend (its tool starts python3), with that backend's bridge environment.
    const script = `
import json, os
from switchboard_bridge import Bridge, BridgeError
parent = json.loads(os.environ["PARENT_META"])
out = {}
with Bridge().connect() as b:
    out["identity"] = b.identity
    out["tools"] = sorted(t["name"] for t in b.list_tools())
    b.call_tool("memory_create_entities",
                {"entities": [{"name": "py-bridge", "entityType": "test", "observations": ["via Python"]}]},
                parent_meta=parent)
    out["graph"] = b.call_tool("memory_read_graph", parent_meta=parent)
    out["signed"] = b.call("vault.sign", {"key": "demo", "data": "from python"}, parent_meta=parent)
    for name, tool in [("denied", "caller_python"), ("cycle", "caller_relay")]:
        try:
            b.call_tool(tool, {"method": "ping"}, parent_meta=parent)
        except BridgeError as e:
            out[name] = {"code": e.code, "message": e.message}
print(json.dumps(out))
`;
    const out = await real.callCaller('python', { script });
    assert.equal(out.error, undefined, JSON.stringify(out.error));
    assert.equal(out.identity, 'caller');
    const tools = out.tools as string[];
    assert.ok(tools.includes('memory_read_graph') && tools.includes('caller_relay'), tools.join());
    assert.ok(!tools.includes('caller_python'));
    assert.match(JSON.stringify(out.graph), /py-bridge/);
    assert.deepEqual(out.signed, {
      signature: expectedSignature('from python'),
      algorithm: 'hmac-sha256',
      key: 'demo',
    });
    assert.deepEqual(out.denied, { code: -32602, message: 'Unknown tool: caller_python' });
    assert.equal((out.cycle as Json).code, -32031);
  });

  test('a wrong token gets -32030', async () => {
    const out = await runPython(
      PRELUDE +
        `
try:
    Bridge().connect()
except BridgeError as e:
    out["wrong"] = err(e)
print(json.dumps(out))
`,
      { SWITCHBOARD_BRIDGE: real.sb.bridgePath, SWITCHBOARD_BRIDGE_TOKEN: 'not-a-token' },
    );
    assert.deepEqual(out.wrong, { code: -32030, message: 'Authentication failed', data: null });
  });
});
