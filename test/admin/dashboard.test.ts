// The operators' dashboard in a real headless Chromium: the printed link logs in (the token
// becomes an HttpOnly cookie and leaves the address bar), a host's call appears in the live
// stream, an operator approves a held call and the host's call completes, every view renders and
// is photographed; a page of another origin cannot act with the operator's cookie.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { connectHttp } from '../support/mcp-clients.js';
import { until } from '../support/poll.js';
import { adminScene, CLOCK, example, NOTES, tempDir } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
/** Set to a directory (docs/images) to keep the screenshots there too. */
const KEEP = process.env.SWITCHBOARD_SCREENSHOTS;
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

test(
  'the dashboard logs in with the printed link, streams calls, approves a held call, and refuses a cross-site POST',
  { skip: existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (install the chromium package)` },
  async (t) => {
    const { chromium } = await import('playwright-core');
    const shots = await tempDir(t, 'sb-dashboard-shots-');
    const { sb, url, token, admin } = await adminScene(t, {
      servers: {
        notes: example(NOTES),
        clock: example(CLOCK),
        // Its error names a PATH with no place to break a line: the page must not grow sideways.
        lost: {
          command: 'no-such-mcp-server',
          env: { PATH: `/opt/${'longdirectoryname'.repeat(15)}/bin` },
        },
      },
      policy: {
        rules: [
          {
            name: 'notes-need-an-operator',
            callers: ['host:*'],
            backends: ['notes'],
            tools: ['add_note'],
            effect: 'approve',
          },
        ],
      },
      workflows: {
        'time-and-notes': {
          description: 'Read the clock, then list the notes',
          steps: [
            { id: 'time', tool: 'clock_now', args: { timeZone: '"UTC"' } },
            { id: 'notes', tool: 'notes_list_notes', needs: ['time'] },
          ],
        },
      },
    });
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    t.after(() => browser.close());
    const context = await browser.newContext({ viewport: { width: 1280, height: 820 } });
    const page = await context.newPage();
    const failures: string[] = [];
    page.on('pageerror', (err) => failures.push(err.message));
    page.on('console', (m) => {
      if (m.type() === 'error') failures.push(m.text());
    });
    const shoot = async (name: string) => {
      const path = join(shots, `dashboard-${name}.png`);
      await page.screenshot({ path, fullPage: true });
      return path;
    };

    // The link `switchboard up` prints: it logs in and the token leaves the address bar.
    await page.goto(sb.admin!.server!.dashboardUrl);
    assert.equal(new URL(page.url()).search, '', 'no token in the address bar');
    const [cookie] = await context.cookies();
    assert.equal(cookie?.name, 'switchboard_admin');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Strict');
    assert.notEqual(cookie.value, token, 'the cookie names a session, it is not the token');
    await page.waitForSelector('#summary:has-text("2/3 backends ready")');

    // A host's call appears in the live stream.
    await page.goto(`${url}/#calls`);
    await page.waitForSelector('#stream-state:has-text("live")');
    const { client } = await connectHttp(t, sb.http!.url, { name: 'dashboard-test-host' });
    await client.callTool({ name: 'clock_now', arguments: { timeZone: 'UTC' } });
    await page.waitForSelector('#calls-rows tr:has-text("clock_now"):has-text("host:")');
    await client.callTool({ name: 'workflows_time-and-notes', arguments: {} });

    // A held call: the operator approves it in the page, and the host's call completes.
    const held = client.callTool({
      name: 'notes_add_note',
      arguments: { title: 'from-host', text: 'approved in a browser' },
    });
    await page.goto(`${url}/#approvals`);
    await page.waitForSelector('#approvals-body button:has-text("Approve")');
    assert.match((await page.textContent('#approvals-body')) ?? '', /add_note/);
    const approvalsShot = await shoot('approvals');
    await page.click('#approvals-body button:has-text("Approve")');
    const result = (await held) as { isError?: boolean; content: { type: string }[] };
    assert.notEqual(result.isError, true);
    assert.equal(result.content[0]?.type, 'resource_link');
    await page.waitForSelector('#approvals-body:has-text("No call waits for approval")');
    await page.goto(`${url}/#calls`);
    await page.waitForSelector('#calls-rows tr:has-text("add_note"):has-text("ok")');
    const callsShot = await shoot('calls');

    // Every other view renders from the API.
    await page.goto(`${url}/#topology`);
    await page.waitForSelector('#topology-body svg.topology');
    await page.waitForSelector('#topology-body td:has-text("host:")');
    const topologyShot = await shoot('topology');
    await page.goto(`${url}/#backends`);
    await page.waitForSelector('[data-backend="notes"]:has-text("ready")');
    await page.waitForSelector('[data-backend="lost"]:has-text("longdirectoryname")');
    const sideways = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(sideways <= 0, `the backends view is ${sideways}px wider than the window`);
    const backendsShot = await shoot('backends');
    await page.goto(`${url}/#catalog`);
    await page.waitForSelector('#catalog-body code:has-text("add_note")');
    // The approve rule is for hosts: the operator viewing the catalog may call add_note as it is.
    await page.waitForSelector('#catalog-body th:has-text("may")');
    await page.waitForSelector('#catalog-body tr:has(code:has-text("add_note")) span.ok:has-text("allow")');
    const catalogShot = await shoot('catalog');
    await page.goto(`${url}/#audit`);
    await page.click('#audit-form button[type="submit"]');
    await page.waitForSelector('#audit-results td:has-text("add_note")');
    await page.click('#audit-verify');
    await page.waitForSelector('#audit-verdict:has-text("Chain intact")');
    const auditShot = await shoot('audit');
    await page.goto(`${url}/#workflows`);
    await page.click('#workflows-body button[data-run]');
    await page.waitForSelector('#run-detail td:has-text("notes")');
    const workflowsShot = await shoot('workflows');

    for (const path of [
      approvalsShot,
      callsShot,
      topologyShot,
      backendsShot,
      catalogShot,
      auditShot,
      workflowsShot,
    ]) {
      assert.ok((await stat(path)).size > PNG.length, `${path} is not empty`);
      assert.deepEqual((await readFile(path)).subarray(0, 8), PNG, `${path} is a PNG`);
      if (KEEP) {
        await mkdir(KEEP, { recursive: true });
        await copyFile(path, join(KEEP, path.slice(shots.length + 1)));
      }
    }

    assert.deepEqual(failures, [], 'no script error in the dashboard');

    // A page of another origin on the same host (so the same site: SameSite lets the cookie go)
    // posts a form to deny a held call. Without the dashboard's header it is refused.
    const second = client.callTool({ name: 'notes_add_note', arguments: { title: 'second', text: 'x' } });
    const pending = await until(async () => {
      const body = (await (await admin('/api/v1/approvals')).json()) as { approvals: { id: string }[] };
      return body.approvals[0];
    }, 'a pending approval');
    const evil = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<form method="POST" action="${url}/api/v1/approvals/${encodeURIComponent(pending.id)}/deny">` +
          `<input name="x" value="y"><button id="go">go</button></form>`,
      );
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    t.after(() => evil.close());
    await page.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.url().includes('/deny')),
      page.click('#go'),
    ]);
    assert.equal(refused.status(), 403);
    assert.equal(
      refused.request().headers()['cookie'],
      undefined,
      'Chromium does not show the cookie header here',
    );
    const still = (await (await admin('/api/v1/approvals')).json()) as { approvals: { id: string }[] };
    assert.deepEqual(
      still.approvals.map((a) => a.id),
      [pending.id],
      'the held call still waits',
    );
    await admin(`/api/v1/approvals/${encodeURIComponent(pending.id)}/approve`, { method: 'POST' });
    await second;
  },
);
