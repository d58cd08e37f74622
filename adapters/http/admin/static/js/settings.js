// settings.js: every key of GET /settings as a labelled control chosen by
// its value's type, grouped by purpose with a label, unit and help line;
// only changed keys are sent, and each 422 message is shown at its field.
import * as api from './api.js';
import { h, replace, heading, field, showErrors, errorNotice, flash, busy } from './ui.js';
import { emailControlsForm } from './email-controls.js';

const keyLabel = (k) => k.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());
const ELSEWHERE = new Set(['default_connection_id', 'fallback_connection_id']);
// What the email log keeps of a body once the message is delivered or has
// failed for good (docs/logs.md); the message sent is never changed.
const LOG_BODY_CHOICES = {
  log_body: {
    options: ['redacted', 'full', 'none'],
    labels: { redacted: 'The message, one-time links hidden (default)', full: 'The whole message', none: 'No body' },
    help: 'Hidden links: one-time links (password resets, confirmations) are replaced with [redacted]. No body: only sender, recipients, subject and status.',
  },
};
// The staging guard (docs/staging.md): who still gets mail while it is held.
const CAPTURE_LISTS = {
  capture_allow_list: 'Addresses and domains that still get mail while this site holds it (a copy or a staging site), one per line: qa@agency.example, team.example.',
};
const LOG_BODY_MAPS = {
  log_body_sources: 'One source per line, as the log names it: my-plugin = full, woocommerce = none.',
};
// The flood guard (docs/delivery.md): what it does with each source's flood.
const FLOOD_MAPS = {
  flood_sources: 'One source per line, as the log names it: woocommerce = hold, my-newsletter = trusted, wordpress = alert.',
};

/** settingsForm builds a form for a flat settings object and saves the
 * changed keys with save(patch). Shared by Settings and Pro settings.
 * lists names keys whose value is a list of words, edited one per line;
 * choices names keys chosen from a list ({ options, labels, help }); maps names
 * keys whose value is an object of names to words, edited as
 * "name = word" lines (the help text). described gives keys their
 * {group, label, unit, help} and groups the headings in order
 * ([slug, title, help]); without groups the keys are one list. */
export function settingsForm(values, save, skip = new Set(), lists = {}, choices = {}, maps = {}, described = {}, groups = []) {
  const controls = {};
  const status = h('div', { role: 'status' });
  const form = h('form', { class: 'card settings-form', novalidate: true });
  // One fieldset per group, in the groups' order; keys of no group last.
  const sets = new Map(groups.map(([g, title, help]) => [g, h('fieldset', { class: 'settings-group', id: `group-${g}` },
    h('legend', {}, title), help ? h('p', { class: 'help' }, help) : null)]));
  const other = h('fieldset', { class: 'settings-group', id: 'group-other' }, h('legend', {}, 'Other'));
  const label = (k) => (described[k] && described[k].label) || keyLabel(k);
  const helpOf = (k, more) => [described[k] && described[k].help, more].filter(Boolean).join(' ') || null;
  const target = (k) => {
    const set = described[k] && sets.get(described[k].group);
    return groups.length ? set || other : form;
  };
  const withUnit = (k, row) => {
    const unit = described[k] && described[k].unit;
    if (unit) row.querySelector('input').after(' ', h('span', { class: 'unit' }, unit));
    return row;
  };
  // The described keys in their order, then the others as the API
  // lists them.
  const keys = [...Object.keys(described).filter((k) => k in values), ...Object.keys(values).filter((k) => !(k in described))];
  for (const k of keys) {
    const v = values[k];
    if (lists[k]) {
      const area = h('textarea', { id: `set-${k}`, name: k, rows: 4, value: (v || []).join('\n') });
      controls[k] = area;
      target(k).append(field(label(k), area, helpOf(k, lists[k])));
      continue;
    }
    if (choices[k]) {
      const sel = h('select', { id: `set-${k}`, name: k, value: v },
        choices[k].options.map((o) => h('option', { value: o }, (choices[k].labels || {})[o] || o)));
      controls[k] = sel;
      target(k).append(field(label(k), sel, helpOf(k, choices[k].help)));
      continue;
    }
    if (maps[k]) {
      const lines = Object.entries(v || {}).map(([name, word]) => `${name} = ${word}`).join('\n');
      const area = h('textarea', { id: `set-${k}`, name: k, rows: 3, value: lines });
      controls[k] = area;
      target(k).append(field(label(k), area, helpOf(k, maps[k])));
      continue;
    }
    if (skip.has(k) || (v !== null && typeof v === 'object')) continue;
    const attrs = { id: `set-${k}`, name: k };
    const ctl = typeof v === 'boolean' ? h('input', { ...attrs, type: 'checkbox', checked: v })
      : typeof v === 'number' ? h('input', { ...attrs, type: 'number', value: v, class: 'small' })
        : h('input', { ...attrs, type: 'text', value: v ?? '' });
    controls[k] = ctl;
    const help = helpOf(k);
    if (help) ctl.setAttribute('aria-describedby', `${ctl.id}-help`);
    target(k).append(typeof v === 'boolean' ? h('div', { class: 'field checkbox', dataset: { key: k } }, ctl, h('label', { for: ctl.id }, label(k)),
      help ? h('p', { class: 'help', id: `${ctl.id}-help` }, help) : null,
      h('p', { class: 'field-error', id: `${ctl.id}-err`, role: 'alert' })) : withUnit(k, field(label(k), ctl, help)));
  }
  // Every group shows, for its note at least (the summary email of
  // "Alerts and reports" has its own card below).
  form.append(...sets.values());
  if (groups.length && other.querySelector('.field')) form.append(other);
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
      // Simulation mode holds mail: the staging guard's banner says so.
      if ('simulation_enabled' in patch) window.dispatchEvent(new Event('mailsvc:capture'));
    } catch (err) {
      replace(status, errorNotice(err, showErrors(form, err.errors)));
    }
  });
  return form;
}

/** reportCard edits summary_report (docs/reports.md): frequency,
 * recipients, connection; and previews or sends a report now. The
 * preview's HTML is shown in a sandboxed frame, where no script runs. */
function reportCard(values, connections) {
  const rep = { frequency: 'weekly', recipients: [], connection_id: null, ...(values.summary_report || {}) };
  const freq = h('select', { id: 'set-summary_report-frequency', name: 'summary_report.frequency', value: rep.frequency },
    ['off', 'daily', 'weekly', 'monthly'].map((o) => h('option', { value: o }, o)));
  const to = h('input', { id: 'set-summary_report-recipients', name: 'summary_report.recipients', type: 'text',
    value: (rep.recipients || []).join(', ') });
  const conn = h('select', { id: 'set-summary_report-connection', name: 'summary_report.connection_id', value: String(rep.connection_id ?? '') },
    h('option', { value: '' }, 'The default connection'), connections.map((c) => h('option', { value: String(c.id) }, c.name)));
  const status = h('div', { role: 'status' });
  const preview = h('div', { class: 'report-preview' });
  const form = h('form', { class: 'card settings-form', id: 'summary-report', novalidate: true },
    h('h2', {}, 'Alerts and reports: the summary email'),
    h('p', { class: 'help' }, 'A summary of deliveries, failures, connection health and alerts, mailed at the end of each day, week (from the site\'s first day of the week, Monday standalone) or month in the site\'s time zone. Weekly to the site\'s admin email by default: choose off to stop it.'),
    field('Frequency', freq),
    field('Recipients', to, 'Comma-separated addresses; empty sends it to the site\'s admin email.'),
    field('Connection', conn),
    status,
    h('div', { class: 'actions' },
      h('button', { class: 'button button-primary', type: 'submit' }, 'Save report settings'), ' ',
      h('button', { class: 'button', type: 'button', id: 'summary-report-preview', onclick: (e) => showPreview(e.currentTarget) }, 'Preview'), ' ',
      h('button', { class: 'button', type: 'button', id: 'summary-report-send', onclick: (e) => sendNow(e.currentTarget) }, 'Send now')),
    preview);
  const recipients = () => to.value.split(',').map((a) => a.trim()).filter(Boolean);
  const fail = (err) => replace(status, errorNotice(err, showErrors(form, err.errors)));
  async function showPreview(button) {
    try {
      const out = await busy(button, api.post('/reports/summary/preview', { period: freq.value === 'off' ? 'weekly' : freq.value }));
      showErrors(form, {});
      replace(status);
      replace(preview, h('h3', {}, out.subject),
        h('iframe', { title: 'Report preview (HTML)', sandbox: '', srcdoc: out.html, class: 'report-frame', style: 'width:100%;height:480px;border:1px solid #ddd;background:#fff' }),
        h('details', {}, h('summary', {}, 'Plain-text part'), h('pre', { class: 'report-text', style: 'white-space:pre-wrap' }, out.text)));
    } catch (err) { fail(err); }
  }
  async function sendNow(button) {
    try {
      const list = recipients();
      const out = await busy(button, api.post('/reports/summary/send', list.length ? { recipients: list } : {}));
      showErrors(form, {});
      replace(status);
      flash('success', `Report queued for ${out.recipients.join(', ')}.`);
    } catch (err) { fail(err); }
  }
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const patch = { frequency: freq.value, recipients: recipients(), connection_id: conn.value === '' ? null : Number(conn.value) };
    try {
      const saved = await busy(e.submitter, api.put('/settings', { summary_report: patch }));
      values.summary_report = saved.summary_report;
      showErrors(form, {});
      replace(status);
      flash('success', 'Report settings saved.');
    } catch (err) { fail(err); }
  });
  return form;
}

/** render shows the free settings, the email controls and the summary
 * report. */
export async function render(root) {
  const [values, controls, connections, schema] = await Promise.all([api.get('/settings'), api.get('/settings/email-controls'),
    api.get('/connections', { per_page: 100 }).catch(() => []), api.get('/settings/schema').catch(() => ({}))]);
  // The settings by purpose, each with its label, unit and help line, as
  // the service describes them (core.FreeSettings).
  const described = Object.fromEntries((schema.settings || []).map((d) => [d.key, d]));
  const groups = (schema.groups || []).map((g) => [g.slug, g.title, g.help]);
  replace(root, heading('Settings'), h('p', {}, 'The default and fallback connections are chosen on the Connections screen.'),
    settingsForm(values, (patch) => api.put('/settings', patch), ELSEWHERE, CAPTURE_LISTS, LOG_BODY_CHOICES, { ...LOG_BODY_MAPS, ...FLOOD_MAPS }, described, groups),
    reportCard(values, Array.isArray(connections) ? connections : []),
    emailControlsForm(controls));
}
