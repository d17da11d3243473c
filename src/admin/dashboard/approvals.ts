// The approvals view: calls waiting for a human, approved or denied from here; the nav badge counts them.
/// <reference lib="dom" />
import { api, el, fill, table, type Json } from './page.js';

export async function approvals(): Promise<void> {
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

export function badge(n: number): void {
  const b = document.getElementById('approvals-badge');
  if (!b) return;
  b.textContent = String(n);
  b.hidden = n === 0;
}

export async function decide(spec: string): Promise<void> {
  const [id, verb] = spec.split('/') as [string, string];
  await api(`/approvals/${encodeURIComponent(id)}/${verb}`, { method: 'POST', body: '{}' });
  await approvals();
}
