// The workflows view: recent runs, and one run's steps.
/// <reference lib="dom" />
import { api, el, fill, state, table, type Json } from './page.js';

export async function workflows(): Promise<void> {
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

export async function showRun(id: string): Promise<void> {
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
