// The dashboard's browser script (compiled to plain JS and served by the admin listener as
// /dashboard/app.js, entered by /dashboard.js): the shell that shows one view at a time over the
// admin API (each view its own module), refreshes it, and wires the page's clicks and forms.
/// <reference lib="dom" />
import { approvals, badge, decide } from './approvals.js';
import { auditForm, auditSearch, auditVerify } from './audit-view.js';
import { startStream } from './calls.js';
import { backendsView, catalog, showDiff } from './catalog-views.js';
import { AuthError, api, el, fill, type Json } from './page.js';
import { topology } from './topology.js';
import { showRun, workflows } from './workflows-view.js';

const REFRESH_MS = 3000;

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
