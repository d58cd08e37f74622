// pro-analytics.js: the overview with the previous period, deliverability
// per provider, and the CSV export of the range.
import * as api from './api.js';
import { h, replace, field, table, errorNotice } from './ui.js';

const rate = (v) => (v === null || v === undefined ? '—' : `${v}%`);
const signed = (v, unit = '') => (v === null || v === undefined ? '—' : `${v > 0 ? '+' : ''}${v}${unit}`);

/** render shows analytics for the chosen number of days. */
export async function render(root) {
  const days = h('select', { id: 'an-days', name: 'days' }, [7, 30, 90, 365].map((d) => h('option', { value: String(d) }, `Last ${d} days`)));
  days.value = '30';
  const body = h('div');
  const load = async () => {
    try {
      const [ov, dl] = await Promise.all([api.get('/pro/analytics/overview', { days: days.value }), api.get('/pro/analytics/deliverability', { days: days.value })]);
      const t = ov.totals;
      const row = (label, x) => [label, String(x.current.sent), String(x.current.delivered), String(x.current.failed), String(x.current.bounced), String(x.current.complained),
        rate(x.current.delivery_rate), signed(x.change.sent_percent, '%')];
      const heads = ['', 'Sent', 'Delivered', 'Failed', 'Bounced', 'Complaints', 'Delivery rate', 'Sent vs previous'];
      replace(body,
        h('section', { class: 'card' }, h('h2', {}, 'Overview'), table('Totals', heads, [row('All mail', t)])),
        h('section', { class: 'card' }, h('h2', {}, 'By connection'), table('By connection', heads, (ov.connections || []).map((c) => row(c.name || `#${c.id}`, c)))),
        h('section', { class: 'card' }, h('h2', {}, 'By source'), table('By source', heads, (ov.sources || []).map((s) => row(s.source || '(unknown)', s)))),
        h('section', { class: 'card' }, h('h2', {}, 'Deliverability'), table('Deliverability', ['Provider', 'Accepted', 'Delivered', 'Bounced', 'Complained', 'Opened', 'Clicked'],
          (dl.providers || dl || []).map((p) => [p.provider, String(p.accepted), String(p.delivered), String(p.bounced), String(p.complained), String(p.opened ?? '—'), String(p.clicked ?? '—')]))));
    } catch (err) { replace(body, errorNotice(err)); }
  };
  const exportCSV = async () => {
    const res = await fetch(api.url('/pro/analytics/export', { days: days.value }), { headers: api.authHeaders(), credentials: api.mode() === 'cookie' ? 'include' : 'omit' });
    const a = h('a', { href: URL.createObjectURL(await res.blob()), download: `mailsvc-logs-${days.value}d.csv` });
    a.click();
    URL.revokeObjectURL(a.href);
  };
  days.addEventListener('change', load);
  replace(root, h('div', { class: 'toolbar' }, field('Range', days), h('button', { class: 'button', type: 'button', onclick: exportCSV }, 'Export the log as CSV')), body);
  await load();
}
