// The audit view: search the hash-chained log a page at a time, and verify the chain.
/// <reference lib="dom" />
import { api, el, fill, state, table, type Json } from './page.js';

let auditCursor: number | null = null;

export function auditForm(): HTMLElement {
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

export async function auditSearch(more: boolean): Promise<void> {
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

export async function auditVerify(): Promise<void> {
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
