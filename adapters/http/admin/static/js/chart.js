// chart.js: the volume chart drawn as inline SVG: one stacked bar per
// bucket (delivered below, failed above), with a text summary for screen
// readers.
const NS = 'http://www.w3.org/2000/svg';

function s(tag, attrs, ...kids) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  el.append(...kids);
  return el;
}

/** volumeChart draws points ({label, delivered, failed}) as stacked bars. */
export function volumeChart(points, title) {
  const W = 720, H = 220, pad = { l: 36, r: 8, t: 10, b: 28 };
  const peak = Math.max(0, ...points.map((p) => p.delivered + p.failed));
  const max = Math.max(2, peak + (peak % 2)); // even, so the middle tick is a whole number
  const iw = W - pad.l - pad.r, ih = H - pad.t - pad.b;
  const bw = iw / Math.max(1, points.length);
  const y = (v) => pad.t + ih - (v / max) * ih;
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', class: 'chart', 'aria-labelledby': 'chart-title chart-desc' });
  const total = points.reduce((a, p) => ({ d: a.d + p.delivered, f: a.f + p.failed }), { d: 0, f: 0 });
  svg.append(s('title', { id: 'chart-title' }, title),
    s('desc', { id: 'chart-desc' }, `${total.d} delivered and ${total.f} failed over ${points.length} buckets.`));
  for (const v of [0, max / 2, max]) {
    svg.append(s('line', { x1: pad.l, x2: W - pad.r, y1: y(v), y2: y(v), class: 'grid' }),
      s('text', { x: pad.l - 4, y: y(v) + 4, 'text-anchor': 'end', class: 'axis' }, String(Math.round(v))));
  }
  points.forEach((p, i) => {
    const x = pad.l + i * bw + bw * 0.15, w = Math.max(1, bw * 0.7);
    const tip = `${p.label}: ${p.delivered} delivered, ${p.failed} failed`;
    if (p.delivered) svg.append(s('rect', { x, y: y(p.delivered), width: w, height: ih + pad.t - y(p.delivered), class: 'bar-delivered' }, s('title', {}, tip)));
    if (p.failed) svg.append(s('rect', { x, y: y(p.delivered + p.failed), width: w, height: y(p.delivered) - y(p.delivered + p.failed), class: 'bar-failed' }, s('title', {}, tip)));
    const every = Math.ceil(points.length / 8);
    if (i % every === 0) {
      const lbl = p.label.length > 10 ? p.label.slice(11, 16) || p.label.slice(5, 10) : p.label.slice(5);
      svg.append(s('text', { x: x + w / 2, y: H - 8, 'text-anchor': 'middle', class: 'axis' }, lbl));
    }
  });
  svg.append(s('path', { d: `M${pad.l} ${pad.t + ih}H${W - pad.r}`, class: 'baseline' }));
  return svg;
}
