// pro-domain.js: the domain check (SPF, DKIM, DMARC, MX) with each
// section's verdict, problems and fix.
import * as api from './api.js';
import { h, replace, field, badge, showErrors, errorNotice, busy } from './ui.js';

/** render shows the domain check form and its report. */
export async function render(root) {
  const domain = h('input', { id: 'dc-domain', name: 'domain', placeholder: 'example.com' });
  const out = h('div', { role: 'status' });
  const form = h('form', { class: 'card', novalidate: true, 'aria-labelledby': 'dc-h' },
    h('h2', { id: 'dc-h' }, 'Check a sending domain'), field('Domain', domain), out,
    h('div', { class: 'actions' }, h('button', { class: 'button button-primary', type: 'submit' }, 'Check')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const r = await busy(e.submitter, api.get('/pro/tools/domain-check', { domain: domain.value.trim() }));
      showErrors(form, {});
      replace(out, h('p', {}, 'Overall: ', badge(r.verdict)), ['spf', 'dkim', 'dmarc', 'mx'].filter((k) => r[k]).map((k) =>
        h('section', { class: 'card' }, h('h3', {}, k.toUpperCase(), ' ', badge(r[k].verdict)),
          (r[k].problems || []).length ? h('ul', {}, r[k].problems.map((p) => h('li', {}, p))) : h('p', {}, 'No problems.'),
          r[k].fix ? h('p', {}, h('strong', {}, 'Fix: '), r[k].fix) : null)));
    } catch (err) { replace(out, errorNotice(err, showErrors(form, err.errors))); }
  });
  replace(root, form);
}
