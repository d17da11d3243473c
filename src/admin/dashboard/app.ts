// The dashboard's browser script (compiled to plain JS and served by the admin listener as
// /dashboard.js): views over the admin API, the live call stream over SSE, approve/deny. It builds
// the page with DOM nodes and textContent only, so nothing a backend or caller wrote becomes markup.
/// <reference lib="dom" />
export {};

const CSRF_HEADER = 'x-switchboard-csrf';
const REFRESH_MS = 3000;
const STREAM_KEEP = 200;

type Json = Record<string, unknown>;
type Child = Node | string | number | null | undefined | false;

function el(tag: string, attrs: Record<string, string | boolean> = {}, ...children: Child[]): HTMLElement {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false) continue;
    node.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children)
    if (c !== null && c !== undefined && c !== false) node.append(c instanceof Node ? c : String(c));
  return node;
}

function table(headers: string[], rows: Child[][], empty = 'nothing yet'): HTMLElement {
  if (rows.length === 0) return el('p', { class: 'muted' }, empty);
  return el(
    'table',
    {},
    el('thead', {}, el('tr', {}, ...headers.map((h) => el('th', {}, h)))),
    el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((c) => el('td', {}, c))))),
  );
}

function fill(id: string, ...children: Child[]): void {
  const body = document.getElementById(id);
  if (!body) return;
  body.replaceChildren(
    ...children
      .filter((c): c is Node | string => c !== null && c !== undefined && c !== false)
      .map((c) => (typeof c === 'number' ? String(c) : c)),
  );
}

function state(text: string | undefined): HTMLElement {
  const cls =
    text === 'ready' || text === 'ok' || text === 'allow' || text === 'pinned' || text === 'succeeded'
      ? 'ok'
      : text === 'starting' || text === 'running' || text === 'pending' || text === 'approve'
        ? 'warn'
        : 'bad';
  return el('span', { class: cls }, text ?? '');
}

class AuthError extends Error {}

/** The API, with the session cookie; POSTs carry the CSRF header a cross-site form cannot set. */
async function api(path: string, init: RequestInit = {}): Promise<Json> {
  const headers = new Headers(init.headers);
  if (init.method === 'POST') {
    headers.set(CSRF_HEADER, '1');
    headers.set('content-type', 'application/json');
  }
  const res = await fetch(`/api/v1${path}`, { ...init, headers, credentials: 'same-origin' });
  if (res.status === 401) throw new AuthError('signed out');
  const body = (await res.json()) as Json;
  if (!res.ok) throw new Error(String(body.message ?? res.statusText));
  return body;
}

// ---- topology ----

async function topology(): Promise<void> {
  const t = await api('/topology');
  const hosts = t.hosts as Json[];
  const backends = t.backends as Json[];
  const edges = t.edges as Json[];
  fill(
    'topology-body',
    drawTopology(hosts, backends, edges),
    el('h3', {}, 'Hosts and callers'),
    table(
      ['caller', 'era', 'sessions', 'clients', 'calls/min'],
      hosts.map((h) => [
        el('code', {}, String(h.caller)),
        String(h.era),
        Number(h.sessions),
        (h.clients as string[]).join(', '),
        Number(h.callsLastMinute),
      ]),
      'no host connected and no call this minute',
    ),
    el('h3', {}, 'Call edges (last minute)'),
    table(
      ['from', 'to', 'kind', 'era', 'calls/min', 'last call'],
      edges.map((e) => [
        el('code', {}, String(e.from)),
        String(e.to),
        e.bridge ? 'bridge' : String(e.fromKind),
        String(e.era),
        Number(e.callsLastMinute),
        String(e.lastCall),
      ]),
      'no calls in the last minute',
    ),
  );
}

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Callers on the left, backends on the right, an arrow per edge; bridge edges arc on the right. */
function drawTopology(hosts: Json[], backends: Json[], edges: Json[]): Element {
  const callers = [
    ...new Set([
      ...hosts.map((h) => String(h.caller)),
      ...edges.filter((e) => !e.bridge).map((e) => String(e.from)),
    ]),
  ];
  const servers = [...new Set([...backends.map((b) => String(b.name)), ...edges.map((e) => String(e.to))])];
  const rowH = 44;
  const height = Math.max(callers.length, servers.length, 1) * rowH + 20;
  const w = 760;
  const root = svg('svg', {
    class: 'topology',
    viewBox: `0 0 ${w} ${height}`,
    role: 'img',
    'aria-label': 'topology',
  });
  const y = (i: number) => 20 + i * rowH;
  const node = (x: number, i: number, label: string, cls: string) => {
    const g = svg('g', { class: `node ${cls}` });
    g.append(
      svg('rect', { x, y: y(i), width: 200, height: 30, rx: 6 }),
      svg('text', { x: x + 10, y: y(i) + 19 }, label.length > 28 ? label.slice(0, 27) + '…' : label),
    );
    root.append(g);
  };
  callers.forEach((c, i) => node(20, i, c, ''));
  servers.forEach((s, i) => {
    const b = backends.find((x) => x.name === s);
    node(
      440,
      i,
      b ? `${s} (${String(b.replicasUp)}/${(b.replicas as unknown[]).length})` : s,
      b ? (b.state === 'ready' ? 'up' : 'down') : '',
    );
  });
  for (const e of edges) {
    const to = servers.indexOf(String(e.to));
    if (e.bridge) {
      const from = servers.indexOf(String(e.from).replace(/^backend:/, ''));
      if (from < 0 || to < 0) continue;
      const y1 = y(from) + 15;
      const y2 = y(to) + 15;
      const bend = 700 + Math.min(50, Math.abs(y2 - y1) / 4);
      root.append(
        svg('path', { class: 'bridge', d: `M640 ${y1} C ${bend} ${y1}, ${bend} ${y2}, 640 ${y2}` }),
        svg('text', { class: 'rate', x: bend - 10, y: (y1 + y2) / 2 }, `${String(e.callsLastMinute)}/min`),
      );
      continue;
    }
    const from = callers.indexOf(String(e.from));
    if (from < 0 || to < 0) continue;
    const y1 = y(from) + 15;
    const y2 = y(to) + 15;
    root.append(
      svg('path', { d: `M220 ${y1} C 330 ${y1}, 330 ${y2}, 440 ${y2}` }),
      svg('text', { class: 'rate', x: 300, y: (y1 + y2) / 2 - 4 }, `${String(e.callsLastMinute)}/min`),
    );
  }
  return root;
}

// ---- backends ----

async function backendsView(): Promise<void> {
  const t = await api('/topology');
  fill(
    'backends-body',
    el(
      'div',
      { class: 'cards' },
      ...(t.backends as Json[]).map((b) =>
        el(
          'div',
          { class: 'card', 'data-backend': String(b.name) },
          el('h4', {}, String(b.name), ' ', state(String(b.state))),
          el(
            'div',
            { class: 'muted' },
            `era ${String(b.era ?? '—')} · ${String(b.tools)} tools · ${String(b.callsLastMinute)} calls/min · ${String(b.restarts)} restarts`,
          ),
          b.lastError ? el('div', { class: 'bad' }, 'last error: ', String(b.lastError)) : null,
          table(
            ['replica', 'state', 'in flight', 'restarts'],
            (b.replicas as Json[]).map((r) => [
              String(r.label),
              state(String(r.state)),
              Number(r.outstanding),
              Number(r.restarts),
            ]),
          ),
          Array.isArray(b.stderr)
            ? el(
                'div',
                {},
                el('h3', {}, 'stderr (last lines)'),
                el('pre', {}, (b.stderr as string[]).join('\n') || '(none)'),
              )
            : null,
        ),
      ),
    ),
  );
}

// ---- catalog ----

async function catalog(): Promise<void> {
  const t = await api('/tools');
  const held = t.held as Json[];
  fill(
    'catalog-body',
    held.length ? el('h3', {}, 'Quarantined') : null,
    held.length
      ? table(
          ['backend', 'name', 'reason', 'flags', ''],
          held.map((h) => [
            String(h.backend),
            el('code', {}, String(h.name)),
            state(String(h.reason)),
            (h.flags as Json[]).map((f) => String(f.kind)).join(', '),
            el('button', { 'data-diff': `${String(h.backend)}\u0000${String(h.name)}` }, 'Show diff'),
          ]),
        )
      : null,
    el('div', { id: 'diff' }),
    el('h3', {}, `Tools (${(t.tools as unknown[]).length})`, t.pinning ? '' : ' — pinning off'),
    table(
      ['name', 'backend', 'pin', 'flags', 'description'],
      (t.tools as Json[]).map((x) => [
        el('code', {}, String(x.name)),
        String(x.backend ?? ''),
        state(String(x.pin)),
        el(
          'span',
          {},
          ...(x.flags as Json[]).map((f) =>
            el('span', { class: 'pill bad', title: String(f.reason) }, String(f.kind)),
          ),
        ),
        String(x.description ?? '').slice(0, 160),
      ]),
    ),
  );
}

async function showDiff(key: string): Promise<void> {
  const [backend, name] = key.split('\u0000') as [string, string];
  const d = await api(`/pins/diff?${new URLSearchParams({ backend, name, kind: 'tool' }).toString()}`);
  const pinned = d.pinned as Json | undefined;
  const served = d.served as Json;
  fill(
    'diff',
    el('h3', {}, `Diff of ${backend}/${name}`),
    el(
      'pre',
      { class: 'diff' },
      el(
        'span',
        { class: 'del' },
        `--- pinned  ${pinned ? `sha256:${String(pinned.sha256)} ${String(pinned.at)}` : '(none: never pinned)'}\n`,
      ),
      el('span', { class: 'add' }, `+++ served  sha256:${String(served.sha256)} ${String(served.at)}\n`),
      ...(d.lines as string[]).map((l) =>
        el('span', { class: l.startsWith('+') ? 'add' : l.startsWith('-') ? 'del' : '' }, l + '\n'),
      ),
    ),
    ...(d.flags as Json[]).map((f) =>
      el('div', { class: 'bad' }, `flag ${String(f.kind)}: ${String(f.reason)}`),
    ),
    el(
      'p',
      { class: 'muted' },
      'Approve the new definition with: ',
      el('code', {}, `switchboard pins approve ${backend}/${name}`),
    ),
  );
}

// ---- live calls ----

const callRows: HTMLElement[] = [];

function callRow(c: Json): HTMLElement {
  return el(
    'tr',
    { 'data-call': String(c.callId) },
    ...[
      String(c.time).slice(11, 23),
      el('code', {}, String(c.caller)),
      String(c.method),
      el('code', {}, String(c.target ?? '')),
      String(c.server ?? ''),
      state(String(c.outcome)),
      `${String(c.durationMs)} ms`,
    ].map((x) => el('td', {}, x)),
  );
}

function renderCalls(): void {
  fill(
    'calls-body',
    el('p', { class: 'muted', id: 'stream-state' }, streamState),
    el(
      'table',
      {},
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          ...['time', 'caller', 'method', 'target', 'server', 'outcome', 'duration'].map((h) =>
            el('th', {}, h),
          ),
        ),
      ),
      el('tbody', { id: 'calls-rows' }, ...callRows),
    ),
  );
}

let streamState = 'connecting…';

async function startStream(): Promise<void> {
  const recent = await api('/calls?limit=50');
  callRows.push(...(recent.calls as Json[]).map(callRow));
  renderCalls();
  const source = new EventSource('/api/v1/calls/stream');
  const setState = (text: string) => {
    streamState = text;
    const p = document.getElementById('stream-state');
    if (p) p.textContent = text;
  };
  source.onopen = () => setState('live: each call appears as it ends');
  source.onerror = () => setState('stream interrupted; reconnecting…');
  source.addEventListener('call', (ev) => {
    const row = callRow(JSON.parse((ev as MessageEvent<string>).data) as Json);
    callRows.unshift(row);
    if (callRows.length > STREAM_KEEP) callRows.length = STREAM_KEEP;
    document.getElementById('calls-rows')?.prepend(row);
  });
}

// ---- approvals ----

async function approvals(): Promise<void> {
  const a = await api('/approvals');
  const list = a.approvals as Json[];
  badge(list.length);
  if (!a.enabled)
    return fill('approvals-body', el('p', { class: 'muted' }, 'No policy rule asks for operator approval.'));
  fill(
    'approvals-body',
    table(
      ['id', 'caller', 'target', 'arguments', 'rule', 'expires', ''],
      list.map((x) => [
        el('code', {}, String(x.id)),
        el('code', {}, String(x.caller)),
        el('code', {}, String(x.exposed)),
        el('pre', {}, String(x.args)),
        String(x.rule),
        new Date(Number(x.expiresAt)).toLocaleTimeString(),
        x.genuine === false
          ? el('span', { class: 'bad' }, 'not written by switchboard')
          : el(
              'span',
              {},
              el('button', { class: 'primary', 'data-decide': `${String(x.id)}/approve` }, 'Approve'),
              ' ',
              el('button', { class: 'danger', 'data-decide': `${String(x.id)}/deny` }, 'Deny'),
            ),
      ]),
      'No call waits for approval.',
    ),
  );
}

function badge(n: number): void {
  const b = document.getElementById('approvals-badge');
  if (!b) return;
  b.textContent = String(n);
  b.hidden = n === 0;
}

async function decide(spec: string): Promise<void> {
  const [id, verb] = spec.split('/') as [string, string];
  await api(`/approvals/${encodeURIComponent(id)}/${verb}`, { method: 'POST', body: '{}' });
  await approvals();
}

// ---- audit ----

let auditCursor: number | null = null;

function auditForm(): HTMLElement {
  const input = (name: string, label: string, type = 'text') =>
    el('label', {}, label, el('input', { name, type }));
  return el(
    'form',
    { class: 'filters', id: 'audit-form' },
    input('tool', 'tool'),
    input('caller', 'caller'),
    el(
      'label',
      {},
      'decision',
      el(
        'select',
        { name: 'decision' },
        ...['', 'allow', 'deny', 'approve'].map((d) => el('option', { value: d }, d || 'any')),
      ),
    ),
    input('since', 'since', 'datetime-local'),
    input('until', 'until', 'datetime-local'),
    el(
      'label',
      {},
      'per page',
      el(
        'select',
        { name: 'limit' },
        ...['25', '50', '100'].map((n) => el('option', { value: n, selected: n === '50' }, n)),
      ),
    ),
    el('button', { class: 'primary', type: 'submit' }, 'Search'),
    el('button', { type: 'button', id: 'audit-verify' }, 'Verify chain'),
  );
}

async function auditSearch(more: boolean): Promise<void> {
  const form = document.getElementById('audit-form') as HTMLFormElement;
  const q = new URLSearchParams();
  for (const [k, v] of new FormData(form)) {
    if (typeof v !== 'string' || !v) continue;
    q.set(k, k === 'since' || k === 'until' ? new Date(v).toISOString() : v);
  }
  if (more && auditCursor !== null) q.set('before', String(auditCursor));
  const r = await api(`/audit?${q.toString()}`);
  if (!r.enabled) return fill('audit-results', el('p', { class: 'muted' }, 'audit.enabled is false.'));
  auditCursor = r.next as number | null;
  fill(
    'audit-results',
    table(
      ['#', 'time', 'caller', 'method', 'target', 'decision', 'rule', 'outcome', 'ms'],
      (r.records as Json[]).map((x) => [
        Number(x.seq),
        new Date(Number(x.ts)).toISOString().replace('T', ' ').slice(0, 23),
        el('code', {}, `${String(x.callerKind)}:${String(x.callerId)}`),
        String(x.method),
        el('code', {}, [x.targetBackend, x.targetName].filter(Boolean).join('/')),
        state(String(x.decision)),
        String(x.rule ?? ''),
        String(x.outcome ?? ''),
        String(x.durationMs ?? ''),
      ]),
      'no matching record',
    ),
    el(
      'div',
      { class: 'row' },
      more ? el('button', { type: 'button', id: 'audit-first' }, 'Newest') : null,
      auditCursor !== null ? el('button', { type: 'button', id: 'audit-older' }, 'Older') : null,
    ),
  );
}

async function auditVerify(): Promise<void> {
  const v = await api('/audit/verify', { method: 'POST', body: '{}' });
  fill(
    'audit-verdict',
    v.ok
      ? el(
          'p',
          { class: 'ok' },
          `Chain intact: ${String(v.records)} records, head ${String(v.head)}`,
          v.checkpoint
            ? `; signed checkpoint #${String((v.checkpoint as Json).seq)}`
            : '; no signed checkpoint yet',
        )
      : el(
          'p',
          { class: 'bad' },
          v.seq !== undefined
            ? `Chain broken at record #${String(v.seq)}: ${String(v.problem)}`
            : String(v.problem),
        ),
  );
}

// ---- workflows ----

async function workflows(): Promise<void> {
  const r = await api('/workflows/runs?limit=50');
  if (!r.enabled) return fill('workflows-body', el('p', { class: 'muted' }, 'No workflow is configured.'));
  fill(
    'workflows-body',
    table(
      ['run', 'workflow', 'caller', 'status', 'started', 'ended', ''],
      (r.runs as Json[]).map((x) => [
        el('code', {}, String(x.id)),
        String(x.workflow),
        el('code', {}, String(x.caller)),
        state(String(x.status)),
        String(x.startedAt),
        String(x.endedAt ?? ''),
        el('button', { 'data-run': String(x.id) }, 'Steps'),
      ]),
      'no run yet',
    ),
    el('div', { id: 'run-detail' }),
  );
}

async function showRun(id: string): Promise<void> {
  const r = await api(`/workflows/runs/${encodeURIComponent(id)}`);
  fill(
    'run-detail',
    el('h3', {}, `Run ${id}`),
    r.error ? el('p', { class: 'bad' }, String(r.error)) : null,
    table(
      ['step', 'status', 'attempts', 'started', 'ended', 'output / error'],
      (r.steps as Json[]).map((s) => [
        String(s.step),
        state(String(s.status)),
        Number(s.attempts),
        String(s.startedAt ?? ''),
        String(s.endedAt ?? ''),
        el('pre', {}, s.error ? String(s.error) : (JSON.stringify(s.output, null, 2) ?? '')),
      ]),
    ),
  );
}

// ---- shell ----

const VIEWS: Record<string, (() => Promise<void>) | undefined> = {
  topology,
  backends: backendsView,
  catalog,
  calls: undefined,
  approvals,
  audit: undefined,
  workflows,
};

let current = 'topology';

async function refresh(): Promise<void> {
  try {
    const s = await api('/status');
    const summary = document.getElementById('summary');
    const bs = s.backends as Json[];
    if (summary)
      summary.textContent = `v${String(s.version)} · pid ${String(s.pid)} · ${bs.filter((b) => b.state === 'ready').length}/${bs.length} backends ready · ${String(s.tools)} tools · up ${String(s.uptimeSeconds)} s`;
    badge(Number(s.approvalsPending));
    await VIEWS[current]?.();
  } catch (err) {
    report(err);
  }
}

function report(err: unknown): void {
  const summary = document.getElementById('summary');
  if (!summary) return;
  summary.className = 'bad';
  summary.textContent =
    err instanceof AuthError
      ? 'Signed out: open the link `switchboard up` logs.'
      : `Error: ${(err as Error).message}`;
}

function show(view: string): void {
  current = Object.hasOwn(VIEWS, view) ? view : 'topology';
  for (const section of document.querySelectorAll<HTMLElement>('main > section'))
    section.hidden = section.id !== `view-${current}`;
  for (const a of document.querySelectorAll<HTMLElement>('nav a'))
    a.classList.toggle('active', a.dataset.view === current);
  void refresh();
}

function wire(): void {
  fill('audit-body', auditForm(), el('div', { id: 'audit-verdict' }), el('div', { id: 'audit-results' }));
  document.addEventListener('submit', (ev) => {
    if ((ev.target as HTMLElement).id !== 'audit-form') return;
    ev.preventDefault();
    auditSearch(false).catch(report);
  });
  document.addEventListener('click', (ev) => {
    const t = ev.target as HTMLElement;
    const act = (p: Promise<void>) => p.catch(report);
    if (t.dataset.decide) void act(decide(t.dataset.decide));
    else if (t.dataset.diff) void act(showDiff(t.dataset.diff));
    else if (t.dataset.run) void act(showRun(t.dataset.run));
    else if (t.id === 'audit-verify') void act(auditVerify());
    else if (t.id === 'audit-older') void act(auditSearch(true));
    else if (t.id === 'audit-first') void act(auditSearch(false));
  });
  window.addEventListener('hashchange', () => show(location.hash.slice(1)));
  show(location.hash.slice(1));
  startStream().catch(report);
  auditSearch(false).catch(report);
  // Views that are lists of state refresh while shown; the call stream and the audit do not need to.
  setInterval(() => {
    if (VIEWS[current] !== undefined) void refresh();
  }, REFRESH_MS);
}

wire();
