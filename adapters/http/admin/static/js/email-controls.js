// email-controls.js: the WordPress core emails the bridge may stop
// (GET/PUT /settings/email-controls), one checkbox per kind grouped as
// the service groups them, with how many emails of each were stopped.
import * as api from './api.js';
import { h, replace, showErrors, errorNotice, flash, busy } from './ui.js';

const GROUPS = { users: 'Users', comments: 'Comments', updates: 'Automatic updates', privacy: 'Personal data requests', site: 'Site' };

const stopped = (n) => (n ? `${n} stopped so far` : '');

/** emailControlsForm shows the controls of state and saves the changed
 * kinds. */
export function emailControlsForm(state) {
  const boxes = {};
  const status = h('div', { role: 'status' });
  const form = h('form', { class: 'card settings-form email-controls', novalidate: true, 'aria-labelledby': 'ec-h' },
    h('h2', { id: 'ec-h' }, 'WordPress core emails'),
    h('p', {}, 'Untick an email to stop WordPress sending it. Each email stopped is counted here and on the dashboard.'));
  for (const [group, title] of Object.entries(GROUPS)) {
    const items = state.controls.filter((c) => c.group === group);
    if (!items.length) continue;
    const set = h('fieldset', { class: 'schema' }, h('legend', {}, title));
    for (const c of items) {
      const box = h('input', { id: `ec-${c.kind}`, name: c.kind, type: 'checkbox', checked: c.enabled });
      boxes[c.kind] = box;
      set.append(h('div', { class: 'field checkbox', dataset: { key: c.kind } }, box, h('label', { for: box.id }, c.label),
        h('span', { class: 'help', id: `ec-${c.kind}-count` }, stopped(c.count)),
        h('p', { class: 'field-error', id: `ec-${c.kind}-err`, role: 'alert' })));
    }
    form.append(set);
  }
  form.append(status, h('div', { class: 'actions' }, h('button', { class: 'button button-primary', type: 'submit' }, 'Save email controls')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const patch = {};
    for (const c of state.controls) {
      if (boxes[c.kind].checked !== c.enabled) patch[c.kind] = boxes[c.kind].checked;
    }
    if (!Object.keys(patch).length) return flash('info', 'Nothing changed.');
    try {
      const saved = await busy(e.submitter, api.put('/settings/email-controls', patch));
      state.controls = saved.controls;
      for (const c of saved.controls) {
        const count = form.querySelector(`#ec-${c.kind}-count`);
        if (count) count.textContent = stopped(c.count);
      }
      showErrors(form, {});
      replace(status);
      flash('success', 'Email controls saved.');
    } catch (err) {
      replace(status, errorNotice(err, showErrors(form, err.errors)));
    }
  });
  return form;
}
