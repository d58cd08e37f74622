// pro-license.js: the licence: its status, activate, refresh, deactivate.
import * as api from './api.js';
import { h, replace, field, badge, when, showErrors, errorNotice, flash, busy } from './ui.js';

/** render shows the licence. */
export async function render(root) {
  const st = await api.get('/pro/license/status');
  const key = h('input', { id: 'lic-key', name: 'license_key', type: 'password', autocomplete: 'off' });
  const status = h('div', { role: 'status' });
  const act = (path, body) => async (e) => {
    try { await busy(e.target, api.post(path, body && body())); await render(root); flash('success', 'Licence updated.'); } catch (err) { replace(status, errorNotice(err, showErrors(root, err.errors))); }
  };
  const form = h('form', { class: 'card', novalidate: true, 'aria-labelledby': 'lic-h' },
    h('h2', { id: 'lic-h' }, 'Activate a licence'), field('Licence key', key), status,
    h('div', { class: 'actions' }, h('button', { class: 'button button-primary', type: 'submit' }, 'Activate')));
  form.addEventListener('submit', (e) => { e.preventDefault(); act('/pro/license/activate', () => ({ license_key: key.value }))({ target: e.submitter }); });
  replace(root,
    h('section', { class: 'card' }, h('dl', { class: 'facts' },
      h('dt', {}, 'Status'), h('dd', {}, badge(st.status || (st.active ? 'active' : 'inactive')), st.message ? ` ${st.message}` : ''),
      h('dt', {}, 'Licence'), h('dd', {}, st.license_id || '—'), h('dt', {}, 'Site'), h('dd', {}, st.site || '—'),
      h('dt', {}, 'Expires'), h('dd', {}, when(st.expires_at)), h('dt', {}, 'Last confirmed'), h('dd', {}, when(st.last_confirmed_at)),
      h('dt', {}, 'Features'), h('dd', {}, (st.features || []).join(', ') || '—')),
      h('div', { class: 'actions' },
        h('button', { class: 'button', type: 'button', onclick: act('/pro/license/refresh') }, 'Check with the licence server'),
        st.license_id ? h('button', { class: 'button button-link-delete', type: 'button', onclick: act('/pro/license/deactivate') }, 'Deactivate') : null)),
    form);
}
