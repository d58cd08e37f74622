// settings.js: every key of GET /settings as a labelled control chosen by
// its value's type; only changed keys are sent, and each 422 message is
// shown at its field.
import * as api from './api.js';
import { h, replace, heading, field, showErrors, errorNotice, flash, busy } from './ui.js';

const label = (k) => k.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());
const ELSEWHERE = new Set(['default_connection_id', 'fallback_connection_id']);
// What the email log keeps of a body once the message is delivered or has
// failed for good (docs/logs.md); the message sent is never changed.
const LOG_BODY_CHOICES = {
  log_body: {
    options: ['redacted', 'full', 'none'],
    help: 'redacted: one-time links (password resets, confirmations) are replaced with [redacted]; full: the whole body; none: no body, only sender, recipients, subject and status.',
  },
};
// The staging guard (docs/staging.md): who still gets mail while it is held.
const CAPTURE_LISTS = {
  capture_allow_list: 'Addresses and domains that still get mail while this site holds it (a copy or a staging site), one per line: qa@agency.example, team.example.',
};
const LOG_BODY_MAPS = {
  log_body_sources: 'One source per line, as the log names it: my-plugin = full, woocommerce = none.',
};

/** settingsForm builds a form for a flat settings object and saves the
 * changed keys with save(patch). Shared by Settings and Pro settings.
 * lists names keys whose value is a list of words, edited one per line;
 * choices names keys chosen from a list ({ options, help }); maps names
 * keys whose value is an object of names to words, edited as
 * "name = word" lines (the help text). */
export function settingsForm(values, save, skip = new Set(), lists = {}, choices = {}, maps = {}) {
  const controls = {};
  const status = h('div', { role: 'status' });
  const form = h('form', { class: 'card settings-form', novalidate: true });
  for (const [k, v] of Object.entries(values)) {
    if (lists[k]) {
      const area = h('textarea', { id: `set-${k}`, name: k, rows: 4, value: (v || []).join('\n') });
      controls[k] = area;
      form.append(field(label(k), area, lists[k]));
      continue;
    }
    if (choices[k]) {
      const sel = h('select', { id: `set-${k}`, name: k, value: v }, choices[k].options.map((o) => h('option', { value: o }, o)));
      controls[k] = sel;
      form.append(field(label(k), sel, choices[k].help));
      continue;
    }
    if (maps[k]) {
      const lines = Object.entries(v || {}).map(([name, word]) => `${name} = ${word}`).join('\n');
      const area = h('textarea', { id: `set-${k}`, name: k, rows: 3, value: lines });
      controls[k] = area;
      form.append(field(label(k), area, maps[k]));
      continue;
    }
    if (skip.has(k) || (v !== null && typeof v === 'object')) continue;
    const attrs = { id: `set-${k}`, name: k };
    const ctl = typeof v === 'boolean' ? h('input', { ...attrs, type: 'checkbox', checked: v })
      : typeof v === 'number' ? h('input', { ...attrs, type: 'number', value: v, class: 'small' })
        : h('input', { ...attrs, type: 'text', value: v ?? '' });
    controls[k] = ctl;
    form.append(typeof v === 'boolean' ? h('div', { class: 'field checkbox', dataset: { key: k } }, ctl, h('label', { for: ctl.id }, label(k)),
      h('p', { class: 'field-error', id: `${ctl.id}-err`, role: 'alert' })) : field(label(k), ctl));
  }
  form.append(status, h('div', { class: 'actions' }, h('button', { class: 'button button-primary', type: 'submit' }, 'Save changes')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const patch = {};
    for (const [k, ctl] of Object.entries(controls)) {
      const was = values[k];
      if (lists[k]) {
        const words = ctl.value.split(/\s+/).filter(Boolean);
        if (JSON.stringify(words) !== JSON.stringify(was || [])) patch[k] = words;
        continue;
      }
      if (maps[k]) {
        const obj = {};
        for (const line of ctl.value.split('\n')) {
          const at = line.indexOf('=');
          if (line.trim() === '') continue;
          obj[(at < 0 ? line : line.slice(0, at)).trim()] = at < 0 ? '' : line.slice(at + 1).trim();
        }
        if (JSON.stringify(obj) !== JSON.stringify(was || {})) patch[k] = obj;
        continue;
      }
      const now = ctl.type === 'checkbox' ? ctl.checked : typeof was === 'number' ? (ctl.value === '' ? null : Number(ctl.value)) : ctl.value;
      if (now !== was && !(was === null && now === '')) patch[k] = now;
    }
    if (!Object.keys(patch).length) return flash('info', 'Nothing changed.');
    try {
      const saved = await busy(e.submitter, save(patch));
      Object.assign(values, saved || patch);
      showErrors(form, {});
      replace(status);
      flash('success', 'Settings saved.');
    } catch (err) {
      replace(status, errorNotice(err, showErrors(form, err.errors)));
    }
  });
  return form;
}

/** render shows the free settings. */
export async function render(root) {
  const values = await api.get('/settings');
  replace(root, heading('Settings'), h('p', {}, 'The default and fallback connections are chosen on the Connections screen.'),
    settingsForm(values, (patch) => api.put('/settings', patch), ELSEWHERE, CAPTURE_LISTS, LOG_BODY_CHOICES, LOG_BODY_MAPS));
}
