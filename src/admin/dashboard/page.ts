// What every dashboard view builds with: DOM nodes made with textContent only (nothing a backend
// or caller wrote becomes markup), and the admin API behind the session cookie.
/// <reference lib="dom" />

const CSRF_HEADER = 'x-switchboard-csrf';

export type Json = Record<string, unknown>;
export type Child = Node | string | number | null | undefined | false;

export function el(
  tag: string,
  attrs: Record<string, string | boolean> = {},
  ...children: Child[]
): HTMLElement {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false) continue;
    node.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children)
    if (c !== null && c !== undefined && c !== false) node.append(c instanceof Node ? c : String(c));
  return node;
}

export function table(headers: string[], rows: Child[][], empty = 'nothing yet'): HTMLElement {
  if (rows.length === 0) return el('p', { class: 'muted' }, empty);
  return el(
    'table',
    {},
    el('thead', {}, el('tr', {}, ...headers.map((h) => el('th', {}, h)))),
    el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((c) => el('td', {}, c))))),
  );
}

export function fill(id: string, ...children: Child[]): void {
  const body = document.getElementById(id);
  if (!body) return;
  body.replaceChildren(
    ...children
      .filter((c): c is Node | string => c !== null && c !== undefined && c !== false)
      .map((c) => (typeof c === 'number' ? String(c) : c)),
  );
}

export function state(text: string | undefined): HTMLElement {
  const cls = ['ready', 'ok', 'allow', 'pinned', 'succeeded', 'done', 'skipped'].includes(text ?? '')
    ? 'ok'
    : ['starting', 'running', 'started', 'pending', 'approve', 'by-arguments'].includes(text ?? '')
      ? 'warn'
      : 'bad';
  return el('span', { class: cls }, text ?? '');
}

export class AuthError extends Error {}

/** The API, with the session cookie; POSTs carry the CSRF header a cross-site form cannot set. */
export async function api(path: string, init: RequestInit = {}): Promise<Json> {
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
