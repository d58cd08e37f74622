// connections.js: the connections list with health and OAuth status, the
// default and fallback choice (/settings), and the create/edit form
// generated from the driver's schema, with test email, verify
// credentials and the OAuth connect button.
import * as api from './api.js';
import { h, replace, heading, table, badge, when, notice, field, showErrors, errorNotice, flash, busy } from './ui.js';
import { schemaForm } from './form.js';

const OAUTH = { outlook: 'microsoft', gmail: 'google', zoho: 'zoho' };

/** render shows the list, or the form for #/connections/new and #/connections/{id}. */
export async function render(root, [which]) {
  if (which) return edit(root, which === 'new' ? null : Number(which));
  return list(root);
}

async function list(root) {
  const [conns, settings, transports] = await Promise.all([api.list('/connections', { per_page: 100 }), api.get('/settings'),
    api.get('/transports').catch(() => [])]);
  // A connection's provider by the name people know ("Other SMTP").
  const provider = new Map(transports.map((t) => [t.driver, t.name]));
  const q = new URLSearchParams(location.search);
  const banner = q.get('oauth') === 'success' ? notice('success', 'The provider authorized the connection.')
    : q.get('oauth') === 'error' ? notice('error', `Authorization failed: ${q.get('oauth_error') || 'unknown error'}.`) : null;
  const choice = (key, label) => {
    const sel = h('select', { id: `set-${key}`, name: key },
      h('option', { value: '' }, '— none —'), conns.items.map((c) => h('option', { value: String(c.id) }, c.name)));
    sel.value = settings[key] ? String(settings[key]) : '';
    sel.addEventListener('change', async () => {
      try {
        await api.put('/settings', { [key]: sel.value ? Number(sel.value) : null });
        flash('success', `${label} saved.`);
      } catch (err) { flash('error', err.errors[key] || err.message); }
    });
    return field(label, sel);
  };
  const sel = new Set();
  const bulk = h('button', { class: 'button', type: 'button', disabled: true, onclick: async () => {
    if (!confirm(`Delete ${sel.size} connection(s)?`)) return;
    try { await api.del('/connections', { ids: [...sel] }); flash('success', 'Deleted.'); list(root); } catch (err) { flash('error', Object.values(err.errors)[0] || err.message); }
  } }, 'Delete selected');
  const rows = conns.items.map((c) => {
    const box = h('input', { type: 'checkbox', 'aria-label': `Select ${c.name}`, onchange: (e) => { e.target.checked ? sel.add(c.id) : sel.delete(c.id); bulk.disabled = !sel.size; } });
    const marks = [settings.default_connection_id === c.id ? 'default' : '', settings.fallback_connection_id === c.id ? 'fallback' : ''].filter(Boolean);
    return [box, h('a', { href: `#/connections/${c.id}` }, c.name), provider.get(c.driver) || c.driver, c.is_active ? 'Active' : 'Off',
      h('span', {}, badge(c.health_status), c.last_error ? h('span', { class: 'muted' }, ` ${c.last_error}`) : null),
      c.oauth_status ? badge(c.oauth_status) : '—', marks.join(', ') || '—', when(c.last_checked_at)];
  });
  replace(root, heading('Connections', h('a', { class: 'button button-primary', href: '#/connections/new' }, 'Add connection')),
    banner,
    h('div', { class: 'card inline-fields' }, choice('default_connection_id', 'Default connection'), choice('fallback_connection_id', 'Fallback connection')),
    h('div', { class: 'toolbar' }, bulk),
    table('Connections', ['', 'Name', 'Provider', 'State', 'Health', 'OAuth', 'Role', 'Checked'], rows));
}

async function edit(root, cid) {
  const [transports, conn] = await Promise.all([api.get('/transports'), cid ? api.get(`/connections/${cid}`) : null]);
  const name = h('input', { id: 'conn-name', name: 'name', value: conn ? conn.name : '' });
  const driver = h('select', { id: 'conn-driver', name: 'driver', disabled: !!conn },
    transports.map((t) => h('option', { value: t.driver }, t.name)));
  driver.value = conn ? conn.driver : new URLSearchParams(location.hash.split('?')[1]).get('driver') || 'smtp';
  const active = h('input', { id: 'conn-active', name: 'is_active', type: 'checkbox', checked: conn ? conn.is_active : true });
  const slot = h('div');
  const status = h('div', { id: 'conn-status' });
  let sf;
  let shown = 0;
  const showSchema = async () => {
    const mine = ++shown; // the last choice wins when answers cross
    const t = await api.get(`/transports/${driver.value}`);
    if (mine !== shown) return;
    sf = schemaForm(t, conn && conn.driver === driver.value ? conn.settings : {}, conn ? conn.pinned || [] : []);
    replace(slot, sf.el);
  };
  driver.addEventListener('change', showSchema);
  const form = h('form', { class: 'card conn-form', novalidate: true, 'aria-labelledby': 'conn-h' },
    field('Name', name), field('Provider', driver), h('div', { class: 'field checkbox' }, active, h('label', { for: active.id }, 'Active')),
    slot, status,
    h('div', { class: 'actions' }, h('button', { class: 'button button-primary', type: 'submit' }, conn ? 'Save changes' : 'Create connection'),
      h('a', { class: 'button', href: '#/connections' }, 'Back to the list')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = { name: name.value, is_active: active.checked, settings: sf.read(!!conn) };
    if (!conn) body.driver = driver.value;
    try {
      const saved = await busy(e.submitter, conn ? api.put(`/connections/${conn.id}`, body) : api.post('/connections', body));
      location.hash = `#/connections/${saved.id}`;
      // The notice shows once the screen holds what was saved, so
      // nothing on it is replaced after the person sees "saved".
      if (conn) await render(root, [String(saved.id)]);
      flash('success', conn ? 'Connection saved.' : 'Connection created.');
    } catch (err) {
      replace(status, errorNotice(err, showErrors(form, err.errors)));
    }
  });
  replace(root, heading(conn ? `Edit ${conn.name}` : 'Add a connection'), conn && conn.settings_error ? notice('error', conn.settings_error) : null,
    h('div', { id: 'conn-h', class: 'screen-reader-text' }, 'Connection settings'), form, conn ? actions(conn) : null);
  await showSchema();
  name.focus();
}

function actions(conn) {
  const to = h('input', { id: 'test-to', name: 'to', type: 'text', autocomplete: 'email' });
  const out = h('div', { id: 'action-result', role: 'status' });
  const show = (res) => replace(out, notice(res.success ? 'success' : 'error', res.message || (res.success ? 'Done.' : 'Failed.'),
    res.log_id ? h('a', { href: `#/logs/${res.log_id}` }, ' View the log') : null));
  const run = (btn, p) => busy(btn, p).then(show, (err) => replace(out, errorNotice(err)));
  const testForm = h('form', { class: 'card', 'aria-labelledby': 'act-h' },
    h('h2', { id: 'act-h' }, 'Check this connection'),
    field('Send a test email to', to, 'Empty: the connection’s from address.'),
    h('div', { class: 'actions' },
      h('button', { class: 'button button-primary', type: 'submit' }, 'Send test email'),
      h('button', { class: 'button', type: 'button', onclick: (e) => run(e.target, api.post(`/connections/${conn.id}/${conn.driver === 'smtp' || conn.settings.delivery_mode === 'smtp' ? 'verify-credentials' : 'verify-api-credentials'}`, {})) }, 'Verify credentials'),
      OAUTH[conn.driver] ? h('button', { class: 'button', type: 'button', onclick: (e) => connect(e.target, conn, out) },
        conn.oauth_status === 'authorized' ? 'Authorize again' : 'Connect with ' + OAUTH[conn.driver]) : null,
      h('button', { class: 'button button-link-delete', type: 'button', onclick: async () => {
        if (!confirm(`Delete ${conn.name}?`)) return;
        try { await api.del(`/connections/${conn.id}`); location.hash = '#/connections'; flash('success', 'Connection deleted.'); } catch (err) { replace(out, errorNotice(err)); }
      } }, 'Delete')),
    out);
  testForm.addEventListener('submit', (e) => {
    e.preventDefault();
    busy(e.submitter, api.post(`/connections/${conn.id}/test`, to.value ? { to: to.value } : {}))
      .then(show, (err) => replace(out, errorNotice(err, showErrors(testForm, err.errors))));
  });
  return testForm;
}

async function connect(btn, conn, out) {
  try {
    const res = await busy(btn, api.get(`/oauth/${OAUTH[conn.driver]}/authorize`, { connection_id: conn.id, format: 'json' }));
    location.assign(res.authorize_url);
  } catch (err) { replace(out, errorNotice(err)); }
}
