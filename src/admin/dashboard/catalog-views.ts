// The backends and catalog views, and the diff of a definition pinning holds for review.
/// <reference lib="dom" />
import { api, el, fill, state, table, type Json } from './page.js';

export async function backendsView(): Promise<void> {
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

export async function catalog(): Promise<void> {
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
      ['name', 'backend', `${String(t.caller)} may`, 'pin', 'flags', 'description'],
      (t.tools as Json[]).map((x) => [
        el('code', {}, String(x.name)),
        String(x.backend ?? ''),
        state(String(x.call)),
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

export async function showDiff(key: string): Promise<void> {
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
