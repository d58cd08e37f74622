// pro-ses.js: Amazon SES identities of an SES connection: list, verify an
// address or domain (with the DKIM records to publish), delete, quota.
import * as api from './api.js';
import { h, replace, field, table, badge, notice, errorNotice, busy } from './ui.js';

/** render shows the identities of the chosen SES connection. */
export async function render(root) {
  const conns = (await api.list('/connections', { per_page: 100 })).items.filter((c) => c.driver === 'ses');
  if (!conns.length) return replace(root, h('p', { class: 'card' }, 'Add an Amazon SES connection to manage its identities.'));
  const conn = h('select', { id: 'ses-conn', name: 'connection_id' }, conns.map((c) => h('option', { value: String(c.id) }, c.name)));
  const ident = h('input', { id: 'ses-identity', name: 'identity', placeholder: 'address or domain' });
  const out = h('div', { role: 'status' });
  const list = h('div');
  const cid = () => Number(conn.value);
  const load = async () => {
    try {
      const [ids, stats] = await Promise.all([api.post('/pro/ses/identities', { connection_id: cid() }), api.post('/pro/ses/stats', { connection_id: cid() })]);
      replace(list, h('p', {}, `Sent ${stats.sent_last_24_hours} of ${stats.max_24_hour_send} in 24 hours${stats.sandbox ? ' · sandbox: only verified recipients' : ''}.`),
        table('Identities', ['Identity', 'Type', 'Verification', 'DKIM', ''], (ids.identities || ids || []).map((i) => [i.identity, i.type, badge(i.verification_status),
          i.dkim ? i.dkim.status : '—', h('button', { class: 'button button-link-delete', type: 'button', onclick: (e) => action(e.target, 'delete', i.identity) }, `Delete ${i.identity}`)])));
    } catch (err) { replace(list, errorNotice(err)); }
  };
  async function action(btn, act, identity) {
    try {
      const r = await busy(btn, api.post('/pro/ses/identities/action', { connection_id: cid(), action: act, identity }));
      replace(out, notice('success', r.message || 'Done.'), r.records ? table('DNS records to publish', ['Type', 'Name', 'Value'], r.records.map((x) => [x.type, x.name, x.value])) : null);
      load();
    } catch (err) { replace(out, errorNotice(err)); }
  }
  conn.addEventListener('change', load);
  replace(root, h('div', { class: 'card' }, field('SES connection', conn), field('Verify an identity', ident),
    h('button', { class: 'button button-primary', type: 'button', onclick: (e) => action(e.target, 'verify', ident.value.trim()) }, 'Verify'), out), list);
  await load();
}
