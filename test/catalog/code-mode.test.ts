// Code mode with a real host and a real backend: run_script runs in QuickJS with the caller's
// tools bound, each inner call is a child tools/call through the pipeline (policy, redaction, the
// audit's parent link), and every limit (CPU, memory, tool calls, output) and cancellation stops
// a script while the switchboard keeps serving.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ConfigInput } from '../../src/config/schema.js';
import { queryAudit, verifyAudit } from '../../src/trust/audit-read.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { until } from '../support/poll.js';

const RECORDS = fileURLToPath(new URL('../fixtures/records-server.js', import.meta.url));

type Answer = {
  content: { type: string; text?: string }[];
  structuredContent?: {
    result?: unknown;
    console: string[];
    toolCalls: number;
    error?: { name: string; message: string; line?: number };
    limit?: string;
  };
  isError?: boolean;
};

test('code mode', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-code-mode-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const journal = join(dir, 'journal.txt');
  const config: ConfigInput = {
    servers: {
      records: {
        command: process.execPath,
        args: [RECORDS, '--journal', journal],
        sandbox: { write: [dir] },
      },
    },
    namespacing: { mode: 'always' },
    policy: {
      rules: [{ name: 'no-ids', backends: ['records'], tools: ['list_record_ids'], effect: 'deny' }],
    },
    redaction: { patterns: ['hunter2-SECRET-\\d+'] },
    audit: { path: join(dir, 'audit.sqlite') },
    catalog: {
      codeMode: { enabled: true, cpuMs: 300, memoryMb: 16, maxToolCalls: 6, maxOutputBytes: 4000 },
      profiles: {
        plain: { codeMode: { enabled: false } },
        finder: { mode: 'search', codeMode: { enabled: true } },
      },
    },
  };
  const sb = await startGateway(t, config);
  const { client } = await connectHttp(t, httpUrl(sb));
  const run = async (script: string, options: { signal?: AbortSignal } = {}) =>
    (await client.callTool({ name: 'run_script', arguments: { script } }, options)) as Answer;

  await t.test(
    'run_script is listed beside the tools, in full and in search mode, and only where on',
    async () => {
      const names = await until(async () => {
        const n = (await client.listTools()).tools.map((x) => x.name);
        return n.includes('records_get_record') ? n : undefined;
      }, 'the records backend');
      assert.ok(names.includes('run_script'));
      assert.ok(!names.includes('records_list_record_ids'), 'policy still filters the list');
      const plain = (await connectHttp(t, `${httpUrl(sb)}/plain`)).client;
      assert.ok(!(await plain.listTools()).tools.some((x) => x.name === 'run_script'));
      await assert.rejects(
        plain.callTool({ name: 'run_script', arguments: { script: 'return 1' } }),
        /Unknown tool/,
      );
      const finder = (await connectHttp(t, `${httpUrl(sb)}/finder`)).client;
      assert.deepEqual((await finder.listTools()).tools.map((x) => x.name).sort(), [
        'call_tool',
        'describe_tools',
        'run_script',
        'search_tools',
      ]);
      const r = (await finder.callTool({
        name: 'run_script',
        arguments: { script: 'return Object.keys(tools).sort()' },
      })) as Answer;
      assert.deepEqual(r.structuredContent!.result, [
        'records_get_record',
        'records_read_summaries',
        'records_secret_note',
        'records_slow',
        'records_write_summary',
      ]);
    },
  );

  await t.test(
    'a multi-step job returns its console and value, every inner call audited under the outer one',
    async () => {
      const r = await run(`
      const open = [];
      for (let id = 1; id <= 5; id++) {
        const rec = await tools.records_get_record({ id });
        if (rec.status === 'open') open.push(rec.customer);
      }
      console.log('open records:', open.length);
      await tools.records_write_summary({ text: 'open: ' + open.join(', ') });
      return { open };
    `);
      assert.equal(r.isError, undefined, r.content[0]!.text);
      assert.deepEqual(r.structuredContent!.result, { open: ['Customer 1', 'Customer 3', 'Customer 5'] });
      assert.deepEqual(r.structuredContent!.console, ['open records: 3']);
      assert.equal(r.structuredContent!.toolCalls, 6);
      assert.match(r.content[0]!.text!, /open records: 3\nresult: \{"open":/);
      assert.match(await readFile(journal, 'utf8'), /write_summary open: Customer 1, Customer 3, Customer 5/);
      sb.flushAudit();
      const db = openTrustDb(join(dir, 'audit.sqlite'));
      t.after(() => db.close());
      const outer = queryAudit(db, { method: 'tools/call' })
        .filter((x) => x.calledName === 'run_script')
        .at(-1)!;
      const inner = queryAudit(db, { method: 'tools/call' }).filter((x) => x.parentCallId === outer.callId);
      assert.deepEqual(
        inner.map((x) => x.calledName),
        [...Array(5).fill('records_get_record'), 'records_write_summary'],
      );
      assert.ok(inner.every((x) => x.decision === 'allow'));
      assert.equal(verifyAudit(db).ok, true);
    },
  );

  await t.test('a denied tool is unknown to the script, and the attempt is audited as refused', async () => {
    const r = await run(`
      const bound = typeof tools.records_list_record_ids;
      try { await callTool('records_list_record_ids', {}); return 'reached'; }
      catch (e) { return { bound, code: e.code, message: e.message }; }
    `);
    assert.deepEqual(r.structuredContent!.result, {
      bound: 'undefined',
      code: -32602,
      message: 'Unknown tool: records_list_record_ids',
    });
    // Exactly what a direct call of a name that does not exist gets.
    await assert.rejects(
      client.callTool({ name: 'records_nothing', arguments: {} }),
      /Unknown tool: records_nothing/,
    );
    sb.flushAudit();
    const db = openTrustDb(join(dir, 'audit.sqlite'));
    t.after(() => db.close());
    const outer = queryAudit(db, { method: 'tools/call' })
      .filter((x) => x.calledName === 'run_script')
      .at(-1)!;
    const denied = queryAudit(db, { method: 'tools/call' }).find(
      (x) => x.parentCallId === outer.callId && x.calledName === 'records_list_record_ids',
    );
    assert.ok(denied, 'the refused inner call has a record');
    assert.deepEqual([denied.decision, denied.rule], ['deny', 'no-ids']);
  });

  await t.test('the script sees what redaction leaves', async () => {
    const r = await run('const n = await tools.records_secret_note(); console.log(n.note); return n');
    assert.doesNotMatch(JSON.stringify(r), /hunter2-SECRET/);
    assert.match(JSON.stringify(r.structuredContent!.result), /REDACTED/);
  });

  await t.test('a runaway loop is stopped at the CPU limit and the switchboard serves on', async () => {
    const r = await run('let i = 0;\nwhile (true) { i++ }');
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent!.limit, 'cpu');
    assert.match(r.content[0]!.text!, /CPU limit/);
    assert.deepEqual((await run('return 1 + 1')).structuredContent!.result, 2);
  });

  await t.test(
    'a script stuck inside one operation is stopped at the CPU limit, and other calls are answered meanwhile',
    async () => {
      let ended = false;
      const stuck = run("const s = 'a'.repeat(4e6);\nreturn s.indexOf('a'.repeat(2e6) + 'b')").finally(
        () => (ended = true),
      );
      // Time for the script to get into its search (the listing must not wait for it either way).
      await new Promise((resolve) => setTimeout(resolve, 200));
      const names = (await client.listTools()).tools.map((x) => x.name);
      assert.ok(names.includes('run_script'));
      assert.equal(ended, false, 'the listing waited for the script');
      const r = await stuck;
      assert.equal(r.structuredContent!.limit, 'cpu');
      assert.deepEqual((await run('return 1 + 1')).structuredContent!.result, 2);
    },
  );

  await t.test('a return value nested past what a message may carry fails the script, answered', async () => {
    const r = await run('let v = 0; for (let i = 0; i < 1000; i++) v = [v]; return v');
    assert.equal(r.isError, true);
    assert.match(r.content[0]!.text!, /nests deeper than \d+ levels/);
  });

  await t.test('a memory bomb is stopped at the memory limit', async () => {
    const r = await run('const hog = [];\nwhile (true) hog.push(new Array(100000).fill(7));');
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent!.limit, 'memory');
    assert.deepEqual((await run('return "still here"')).structuredContent!.result, 'still here');
  });

  await t.test(
    "recursion below the interpreter's own check ends the script, before or after a tool call",
    async () => {
      // JSON.parse of 100,000 nested brackets overflows the host's stack inside the interpreter.
      // After a tool call the script goes on in that call's callback, where the overflow once went
      // unhandled and ended the process.
      for (const first of ['', 'await tools.records_get_record({ id: 1 });\n']) {
        const r = await run(`${first}JSON.parse('['.repeat(1e5) + ']'.repeat(1e5));\nreturn 1`);
        assert.equal(r.isError, true);
        assert.equal(r.structuredContent!.limit, 'stack');
        assert.match(r.content[0]!.text!, /stack overflow/);
      }
      assert.deepEqual((await run('return "still here"')).structuredContent!.result, 'still here');
    },
  );

  await t.test('syntax and runtime errors say their line', async () => {
    const syntax = await run('const a = 1;\nconst b = ;\nreturn a');
    assert.equal(syntax.isError, true);
    assert.equal(syntax.structuredContent!.error!.name, 'SyntaxError');
    assert.equal(syntax.structuredContent!.error!.line, 2);
    assert.match(syntax.content[0]!.text!, /^SyntaxError at line 2: /);
    const runtime = await run('console.log("before");\nconst x = null;\n\nreturn x.field;');
    assert.equal(runtime.isError, true);
    assert.equal(runtime.structuredContent!.error!.name, 'TypeError');
    assert.equal(runtime.structuredContent!.error!.line, 4);
    assert.deepEqual(runtime.structuredContent!.console, ['before']);
    // Cut short, a script fails where it ends, not on a line of its own wrapper after it.
    const cut = await run('return (');
    assert.equal(cut.structuredContent!.error!.name, 'SyntaxError');
    assert.equal(cut.structuredContent!.error!.line, 1);
    const cutLater = await run('const a = 1;\nreturn [a,\n\n');
    assert.equal(cutLater.structuredContent!.error!.line, 2, 'blank lines after it hold nothing');
  });

  await t.test('output past the limit stops the script', async () => {
    const r = await run('for (let i = 0; i < 100000; i++) console.log("line", i, "of some filler text");');
    assert.equal(r.structuredContent!.limit, 'output');
    const bytes = r.structuredContent!.console.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
    assert.ok(bytes <= 4000, `${bytes} bytes of console kept`);
    const big = await run('return "x".repeat(5000)');
    assert.equal(big.structuredContent!.limit, 'output');
    assert.equal(big.structuredContent!.result, undefined);
  });

  await t.test('tool calls past the limit stop the script', async () => {
    const r = await run('for (let id = 1; id <= 20; id++) await tools.records_get_record({ id: 1 });');
    assert.equal(r.structuredContent!.limit, 'calls');
    assert.equal(r.structuredContent!.toolCalls, 6);
  });

  await t.test('cancelling run_script stops the script and cancels the tool it is waiting on', async () => {
    const scripts = () => {
      sb.flushAudit();
      const db = openTrustDb(join(dir, 'audit.sqlite'), { readonly: true });
      try {
        return queryAudit(db, { method: 'tools/call' }).filter((x) => x.calledName === 'run_script');
      } finally {
        db.close();
      }
    };
    const before = scripts().length;
    const ac = new AbortController();
    const call = run('await tools.records_slow({}); return "finished"', { signal: ac.signal });
    await until(
      async () => ((await readFile(journal, 'utf8')).includes('slow started') ? true : undefined),
      'slow to start',
    );
    ac.abort(new Error('enough'));
    await assert.rejects(call);
    await until(
      async () => ((await readFile(journal, 'utf8')).includes('slow cancelled') ? true : undefined),
      'the inner call to be cancelled',
      { timeoutMs: 30_000 },
    );
    // Recorded as the cancelled call it is, not as a script that failed.
    const outer = await until(() => scripts()[before], 'the script call to be recorded');
    assert.deepEqual([outer.outcome, outer.errorCode], ['error', 'cancelled']);
  });
});
