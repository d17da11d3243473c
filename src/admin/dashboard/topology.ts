// The topology view: hosts, switchboard and backends drawn as SVG, with each edge's call rate.
/// <reference lib="dom" />
import { api, el, fill, table, type Json } from './page.js';

export async function topology(): Promise<void> {
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
  const labels = new EdgeLabels();
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
    const at = labels.place(y1, y2);
    root.append(
      svg('path', { d: `M220 ${y1} C 330 ${y1}, 330 ${y2}, 440 ${y2}` }),
      svg(
        'text',
        { class: 'rate', x: at.x, y: at.y + 4, 'text-anchor': 'middle' },
        `${String(e.callsLastMinute)}/min`,
      ),
    );
  }
  return root;
}

/**
 * Where each caller-to-server edge's rate goes: on its curve, at the middle unless another label
 * is there already (two edges that cross meet at their middles), else further along it.
 */
class EdgeLabels {
  private readonly placed: { x: number; y: number }[] = [];

  place(y1: number, y2: number): { x: number; y: number } {
    const along = (t: number) => {
      // The cubic M220,y1 C330,y1 330,y2 440,y2 at t.
      const u = 1 - t;
      return {
        x: u * u * u * 220 + 3 * u * t * 330 + t * t * t * 440,
        y: (u * u * u + 3 * u * u * t) * y1 + (3 * u * t * t + t * t * t) * y2,
      };
    };
    const free = (p: { x: number; y: number }) =>
      this.placed.every((q) => Math.abs(q.x - p.x) > 44 || Math.abs(q.y - p.y) > 13);
    const at = [0.5, 0.3, 0.7, 0.2, 0.8].map(along).find(free) ?? along(0.5);
    this.placed.push(at);
    return at;
  }
}
