// pro-suppressions.js: the suppression list: search, add, remove.
import * as api from './api.js';
import { h, replace, field, table, badge, when, showErrors, errorNotice, flash, busy } from './ui.js';

/** render shows the suppression list. */
export async function render(root) {
  const search = h('input', { id: 'sup-search', name: 'search', type: 'search' });
  const email = h('input', { id: 'sup-email', name: 'email', autocomplete: 'off' });
  const reason = h('select', { id: 'sup-reason', name: 'reason' }, ['manual', 'bounce', 'complaint'].map((r) => h('option', { value: r }, r)));
  const list = h('div');
  const status = h('div', { role: 'status' });
  let page = 1;
  const load = async () => {
    const res = await api.list('/pro/suppressions', { search: search.value, page, per_page: 20 });
    replace(list, table('Suppressed addresses', ['Address', 'Reason', 'Since', ''], res.items.map((s) => [s.email, badge(s.reason), when(s.created_at),
      h('button', { class: 'button', type: 'button', onclick: async (e) => { await busy(e.target, api.del(`/pro/suppressions/${s.id}`)); flash('success', `${s.email} removed.`); load(); } }, `Remove ${s.email}`)])),
    h('nav', { class: 'pager', 'aria-label': 'Pages' }, `${res.total} addresses`,
      h('button', { class: 'button', type: 'button', disabled: page <= 1, onclick: () => { page--; load(); } }, '‹ Previous'),
      h('button', { class: 'button', type: 'button', disabled: page >= res.pages, onclick: () => { page++; load(); } }, 'Next ›')));
  };
  const add = h('form', { class: 'card inline-fields', novalidate: true, 'aria-label': 'Add an address' }, field('Address', email), field('Reason', reason),
    h('button', { class: 'button button-primary', type: 'submit' }, 'Suppress'), status);
  add.addEventListener('submit', async (e) => {
    e.preventDefault();
    try { await busy(e.submitter, api.post('/pro/suppressions', { email: email.value, reason: reason.value })); email.value = ''; showErrors(add, {}); load(); } catch (err) {
      replace(status, errorNotice(err, showErrors(add, err.errors)));
    }
  });
  const find = h('form', { role: 'search', class: 'toolbar' }, field('Search', search), h('button', { class: 'button', type: 'submit' }, 'Search'));
  find.addEventListener('submit', (e) => { e.preventDefault(); page = 1; load(); });
  replace(root, add, find, list);
  await load();
}
