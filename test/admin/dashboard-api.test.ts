// The dashboard's door and API without a browser: no credential is 401 for the page and the API,
// the printed link becomes a session cookie, a cookie-authenticated POST needs the dashboard's
// header and its own origin; the audit browser pages back through the chain and verifies it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connectHttp } from '../support/mcp-clients.js';
import { until } from '../support/poll.js';
import { adminScene, example, NOTES } from './helpers.js';

test('the page and the API are 401 without credentials; the link becomes a cookie; cookie POSTs need the CSRF header', async (t) => {
  const { url, token } = await adminScene(t, { servers: { notes: example(NOTES) } });
  for (const path of ['/', '/dashboard.js', '/api/v1/status', '/api/v1/topology', '/api/v1/audit'])
    assert.equal((await fetch(url + path)).status, 401, path);
  const login = await fetch(`${url}/?token=${encodeURIComponent(token)}`, { redirect: 'manual' });
  assert.equal(login.status, 303);
  assert.equal(login.headers.get('location'), '/');
  const setCookie = login.headers.get('set-cookie') ?? '';
  assert.match(setCookie, /HttpOnly/);
  assert.match(setCookie, /SameSite=Strict/);
  assert.ok(!setCookie.includes(token), 'the token is not the cookie');
  const cookie = setCookie.split(';')[0]!;
  const page = await fetch(`${url}/`, { headers: { cookie } });
  assert.equal(page.status, 200);
  const csp = page.headers.get('content-security-policy') ?? '';
  assert.match(csp, /script-src 'self'/);
  assert.ok(!/unsafe-inline|https?:/.test(csp), 'nothing but self');
  assert.ok(!/<script>|<style>| on[a-z]+=/.test(await page.text()), 'no inline script or style');
  assert.equal((await fetch(`${url}/api/v1/status`, { headers: { cookie } })).status, 200);
  assert.equal(
    (await fetch(`${url}/api/v1/status`, { headers: { cookie: 'switchboard_admin=forged' } })).status,
    401,
  );
  const post = (headers: Record<string, string>) =>
    fetch(`${url}/api/v1/audit/verify`, { method: 'POST', headers: { cookie, ...headers } });
  const bare = await post({});
  assert.equal(bare.status, 403);
  assert.equal(((await bare.json()) as { error: string }).error, 'csrf');
  assert.equal((await post({ 'x-switchboard-csrf': '1', origin: 'http://evil.example' })).status, 403);
  assert.equal((await post({ 'x-switchboard-csrf': '1', origin: url })).status, 200);
  // A bearer credential is not ambient: no CSRF header needed.
  const bearer = await fetch(`${url}/api/v1/audit/verify`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(bearer.status, 200);
});

test('the audit browser filters and pages back by sequence number, and verifies the chain', async (t) => {
  const { sb, admin } = await adminScene(t, { servers: { notes: example(NOTES) } });
  const { client } = await connectHttp(t, sb.http!.url);
  for (let i = 0; i < 5; i++) await client.callTool({ name: 'list_notes', arguments: {} });
  sb.flushAudit();
  type Page = { records: { seq: number; targetName: string; decision: string }[]; next: number | null };
  // The audit writer appends off the request path: wait until all five are in.
  await until(async () => {
    const all = (await (await admin('/api/v1/audit?tool=list_notes')).json()) as Page;
    return all.records.length >= 5 ? true : undefined;
  }, 'five audit records');
  const first = (await (await admin('/api/v1/audit?tool=list_notes&limit=3')).json()) as Page;
  assert.equal(first.records.length, 3);
  assert.ok(first.records.every((r) => r.targetName === 'list_notes'));
  assert.ok(first.records[0]!.seq > first.records[2]!.seq, 'newest first');
  assert.equal(first.next, first.records[2]!.seq);
  const second = (await (
    await admin(`/api/v1/audit?tool=list_notes&limit=3&before=${first.next}`)
  ).json()) as Page;
  assert.equal(second.records.length, 2);
  assert.ok(second.records.every((r) => r.seq < first.next!));
  const denied = (await (await admin('/api/v1/audit?decision=deny')).json()) as Page;
  assert.deepEqual(denied.records, []);
  assert.equal((await admin('/api/v1/audit?decision=maybe')).status, 400);
  const verdict = (await (await admin('/api/v1/audit/verify', { method: 'POST' })).json()) as {
    ok: boolean;
    records: number;
  };
  assert.equal(verdict.ok, true);
  assert.ok(verdict.records >= 5);
  const topology = (await (await admin('/api/v1/topology')).json()) as {
    edges: { from: string; to: string; callsLastMinute: number }[];
  };
  assert.ok(
    topology.edges.some((e) => e.from.startsWith('host:') && e.to === 'notes' && e.callsLastMinute >= 5),
  );
  const runs = (await (await admin('/api/v1/workflows/runs')).json()) as { enabled: boolean };
  assert.equal(runs.enabled, false);
});
