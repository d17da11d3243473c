// The live call stream: the admin API's server-sent events, newest first, the last few hundred kept.
/// <reference lib="dom" />
import { api, el, fill, state, type Json } from './page.js';

const STREAM_KEEP = 200;

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

export async function startStream(): Promise<void> {
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
