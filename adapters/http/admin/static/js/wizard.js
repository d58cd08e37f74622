// wizard.js: the setup wizard shown on the dashboard on first use. It asks
// only what sending needs: the provider (by the names people know, with
// where its console shows the key), the provider's essential fields (the
// ones marked advanced folded under "Advanced"), a connection name, the
// site's From email and name (which replace WordPress's default
// wordpress@ sender); then what to turn on, with the defaults stated; then
// it saves, sends a test email and is done.
import * as api from './api.js';
import { h, replace, notice, field, showErrors, errorNotice, busy } from './ui.js';
import { schemaForm } from './form.js';

// What the log keeps of a body (docs/logs.md), in words.
const BODY_MODES = [
  ['redacted', 'The message, with one-time links (password resets) hidden (default)'],
  ['full', 'The whole message'],
  ['none', 'No message body: sender, recipients, subject and status only'],
];
// The events the wizard's email alert is sent for.
const ALERT_EVENTS = ['delivery_failed', 'connection_down'];

const checkbox = (name, label, checked, help) => {
  const box = h('input', { id: `ob-${name}`, name, type: 'checkbox', checked });
  return { box, el: h('div', { class: 'field checkbox' }, box, h('label', { for: box.id }, label), help ? h('p', { class: 'help' }, help) : null) };
};

/** onboarding shows the wizard in box unless the site is set up already;
 * reload redraws the dashboard once the wizard is done. */
export async function onboarding(box, reload) {
  const [state, conns] = await Promise.all([api.get('/dashboard/onboarding'), api.list('/connections', { per_page: 1 })]);
  // First use only: a site that already has a connection skips the wizard.
  if (state.dismissed || state.completed || (conns.total > 0 && !state.connection_id)) return;
  const [transports, settings] = await Promise.all([api.get('/transports'), api.get('/settings')]);

  // 1. The provider.
  const pick = h('select', { id: 'ob-driver', name: 'driver' },
    h('option', { value: '' }, 'Choose your email provider…'), transports.map((t) => h('option', { value: t.driver }, t.name)));
  pick.value = state.driver || '';
  const where = h('p', { class: 'help setup-help', id: 'ob-setup-help' });

  // 2. The connection: its name, the provider's fields, the site's sender.
  const name = h('input', { id: 'ob-name', name: 'name', type: 'text', autocomplete: 'off' });
  const slot = h('div');
  const fromEmail = h('input', { id: 'ob-from_email', name: 'site_from_email', type: 'text', autocomplete: 'email', value: settings.from_email || '' });
  const fromName = h('input', { id: 'ob-from_name', name: 'site_from_name', type: 'text', autocomplete: 'organization', value: settings.from_name || '' });

  // 3. What to turn on.
  const logs = checkbox('log_emails', 'Keep a log of every email', settings.log_emails !== false, 'On by default. Logs are kept 90 days unless changed in Settings.');
  const body = h('select', { id: 'ob-log_body', name: 'log_body' }, BODY_MODES.map(([v, t]) => h('option', { value: v }, t)));
  body.value = settings.log_body || 'redacted';
  const alerts = checkbox('alerts', 'Email me when a message fails for good or a connection stops working', true,
    'On by default: sent to the address the test email goes to, through this connection. More channels (Slack, SMS, …) on the Alerts screen.');
  const report = (settings.summary_report || {});
  const summary = checkbox('summary', 'Send me a weekly summary of deliveries and failures', (report.frequency || 'weekly') !== 'off',
    'On by default, to the site’s admin email. Daily, weekly or monthly on the Settings screen.');

  // 4. The test.
  const to = h('input', { id: 'ob-to', name: 'test_email', type: 'text', autocomplete: 'email' });
  const status = h('div', { role: 'status' });
  let sf = null;
  let named = false; // the person typed a name: a provider change keeps it
  name.addEventListener('input', () => { named = name.value !== ''; });

  const form = h('form', { class: 'card wizard', 'aria-labelledby': 'ob-h', novalidate: true },
    h('h2', { id: 'ob-h' }, 'Set up sending'),
    h('p', {}, 'Four short steps: choose your provider, fill in what it gave you, choose what to turn on, and send a test email.'),
    h('fieldset', { class: 'wizard-step' }, h('legend', {}, '1. Your email provider'), field('Provider', pick), where),
    h('fieldset', { class: 'wizard-step', id: 'ob-connection' }, h('legend', {}, '2. Connection'),
      field('Connection name', name, 'How this connection is named in the logs and alerts.'),
      slot,
      field('From email', fromEmail, 'Replaces WordPress’s default sender (wordpress@…) on every email of this site. A plugin that sets its own sender keeps it, unless the connection’s “Force from” is on.'),
      field('From name', fromName, 'Replaces the name “WordPress” as the sender’s name.')),
    h('fieldset', { class: 'wizard-step' }, h('legend', {}, '3. What to turn on'),
      logs.el, field('What the log keeps of a message', body), alerts.el, summary.el),
    h('fieldset', { class: 'wizard-step' }, h('legend', {}, '4. Send a test email'),
      field('Send the test email to', to, 'Empty: the site’s admin address.')),
    status,
    h('div', { class: 'actions' },
      h('button', { class: 'button button-primary', type: 'submit' }, 'Save and send a test email'),
      h('button', { class: 'button', type: 'button', onclick: async () => { await api.post('/dashboard/onboarding', { dismissed: true }); box.replaceChildren(); } }, 'Dismiss')));
  logs.box.addEventListener('change', () => { body.disabled = !logs.box.checked; });

  let chosen = 0;
  const choose = async () => {
    const mine = ++chosen; // the last choice wins when answers cross
    slot.replaceChildren();
    where.textContent = '';
    sf = null;
    if (!pick.value) return;
    const t = await api.get(`/transports/${pick.value}`);
    if (mine !== chosen) return;
    sf = schemaForm(t, {}, [], { omit: ['from_email', 'from_name'] });
    replace(slot, sf.el);
    where.textContent = t.setup_help || t.description || '';
    if (!named) name.value = t.name;
    api.post('/dashboard/onboarding', { driver: pick.value, step: 1 }).catch(() => {});
  };
  pick.addEventListener('change', choose);

  // siteErrors names the settings' field messages as the wizard's controls.
  const siteErrors = (errs) => Object.fromEntries(Object.entries(errs || {}).map(([k, v]) =>
    [k === 'from_email' || k === 'from_name' ? `site_${k}` : k, v]));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!sf) return showErrors(form, { driver: 'Choose a provider.' });
    const button = e.submitter;
    try {
      await busy(button, api.put('/settings', {
        from_email: fromEmail.value.trim(), from_name: fromName.value.trim(),
        log_emails: logs.box.checked, log_body: body.value,
        summary_report: { ...report, frequency: summary.box.checked ? (report.frequency && report.frequency !== 'off' ? report.frequency : 'weekly') : 'off' },
      }));
      const res = await busy(button, api.post('/dashboard/onboarding/apply', {
        name: name.value.trim() || undefined, driver: pick.value, settings: sf.read(), test_email: to.value.trim() || undefined,
        connection_id: state.connection_id || undefined }));
      state.connection_id = res.connection.id;
      showErrors(form, {});
      if (!res.test.success) return replace(status, notice('error', `The provider refused the test email: ${res.test.message}`));
      if (alerts.box.checked) {
        await api.post('/notifications', { name: 'Email alerts', type: 'email', is_active: true, events: ALERT_EVENTS,
          settings: { to: res.test.to, connection_id: res.connection.id } }).catch(() => {});
      }
      replace(box, notice('success', `Test email sent to ${res.test.to}. mailsvc is ready: “${res.connection.name}” sends this site’s email.`));
      reload();
    } catch (err) {
      replace(status, errorNotice(err, showErrors(form, siteErrors(err.errors))));
    }
  });
  replace(box, form);
  if (pick.value) await choose();
}
