// alerts.js: alert channels: list, create and edit (fields per type),
// enable/disable/delete in bulk, test a saved or unsaved channel, the
// threshold of failures, channel types and events by name, and Telegram
// chat detection from a bot token.
import * as api from './api.js';
import { h, replace, heading, table, badge, field, showErrors, errorNotice, notice, flash, busy } from './ui.js';
import { MASK } from './form.js';

// The settings of each channel type (docs/alerts.md).
const TYPES = {
  telegram: [['bot_token', 'Bot token', true], ['chat_id', 'Chat id', false]],
  slack: [['webhook_url', 'Webhook URL', true]],
  discord: [['webhook_url', 'Webhook URL', true]],
  teams: [['webhook_url', 'Webhook URL', true]],
  webhook: [['url', 'URL', true], ['secret', 'Signing secret (optional)', true]],
  email: [['to', 'Send to (comma-separated)', false], ['connection_id', 'Through connection', false]],
  twilio: [['account_sid', 'Account SID', false], ['auth_token', 'Auth token', true],
    ['from', 'From (Twilio number, +15551234567, or sender ID)', false], ['to', 'To (phone number, +447700900123)', false]],
};
const EVENTS = ['delivery_failed', 'fallback_used', 'connection_down', 'connection_recovered', 'oauth_refresh_failed', 'queue_stalled', 'site_quota', 'flood_held'];
// The channel types and events by name (docs/alerts.md); a type or event
// not listed (a module's) shows as it is.
const TYPE_NAMES = { telegram: 'Telegram', slack: 'Slack', discord: 'Discord', teams: 'Microsoft Teams', webhook: 'Webhook', email: 'Email', twilio: 'SMS (Twilio)' };
const EVENT_NAMES = {
  delivery_failed: 'A message failed for good',
  fallback_used: 'The fallback connection sent a message',
  connection_down: 'A connection stopped working',
  connection_recovered: 'A connection works again',
  oauth_refresh_failed: 'An OAuth token could not be renewed',
  queue_stalled: 'Mail is stuck in the queue',
  site_quota: 'A site reached its sending limit',
  flood_held: 'A flood of mail was held',
};
const typeName = (t) => TYPE_NAMES[t] || t;
const eventName = (e) => EVENT_NAMES[e] || e;

// connections are the site's connections, by name in the email channel's
// choice of the connection that sends its alerts.
let connections = [];

/** render shows the channels and the form for a new or chosen one. */
export async function render(root, [which]) {
  const [channels, conns] = await Promise.all([api.get('/notifications').then((c) => c || []),
    api.get('/connections', { per_page: 100 }).catch(() => [])]);
  connections = Array.isArray(conns) ? conns : [];
  const editing = which === 'new' ? {} : channels.find((c) => String(c.id) === which);
  const sel = new Set();
  const bulk = (action) => async (e) => {
    if (action === 'delete' && !confirm(`Delete ${sel.size} channel(s)?`)) return;
    try { await busy(e.target, api.post('/notifications/bulk', { action, ids: [...sel] })); await render(root, []); flash('success', 'Done.'); } catch (err) { flash('error', err.message); }
  };
  const rows = channels.map((c) => [
    h('input', { type: 'checkbox', 'aria-label': `Select ${c.name}`, onchange: (e) => (e.target.checked ? sel.add(c.id) : sel.delete(c.id)) }),
    h('a', { href: `#/alerts/${c.id}` }, c.name), typeName(c.type), badge(c.is_active ? 'active' : 'inactive'),
    ((c.events || []).length ? c.events.map(eventName).join('; ') : 'Every event') + threshold(c)]);
  replace(root, heading('Alerts', h('a', { class: 'button button-primary', href: '#/alerts/new' }, 'Add channel')),
    h('div', { class: 'toolbar' }, ['enable', 'disable', 'delete'].map((a) => h('button', { class: 'button', type: 'button', onclick: bulk(a) }, `${a[0].toUpperCase()}${a.slice(1)} selected`))),
    table('Alert channels', ['', 'Name', 'Type', 'State', 'Events'], rows),
    editing ? channelForm(editing, root) : null);
}

// whole reads a whole number typed in a field, dflt when it is empty.
const whole = (v, dflt) => { const n = Number.parseInt(v, 10); return Number.isNaN(n) ? dflt : n; };

// threshold describes a channel's delivery_failed threshold, if it has one.
const threshold = (c) => (c.threshold_count > 1 ? ` (failures: after ${c.threshold_count} in ${c.threshold_minutes} minutes)` : '');

function channelForm(ch, root) {
  const name = h('input', { id: 'al-name', name: 'name', value: ch.name || '' });
  const type = h('select', { id: 'al-type', name: 'type' }, Object.keys(TYPES).map((t) => h('option', { value: t }, typeName(t))));
  type.value = ch.type || 'slack';
  const active = h('input', { id: 'al-active', name: 'is_active', type: 'checkbox', checked: ch.is_active !== false });
  const events = h('fieldset', { class: 'events' }, h('legend', {}, 'Events (none checked: every event)'),
    EVENTS.map((ev) => h('label', { class: 'inline' }, h('input', { type: 'checkbox', name: 'events', value: ev, checked: (ch.events || []).includes(ev) }), ` ${eventName(ev)} `)));
  const count = h('input', { id: 'al-threshold_count', name: 'threshold_count', type: 'number', min: 1, max: 1000, value: ch.threshold_count || 1 });
  const minutes = h('input', { id: 'al-threshold_minutes', name: 'threshold_minutes', type: 'number', min: 0, max: 10080, value: ch.threshold_minutes || 0 });
  const thresholds = h('fieldset', { class: 'threshold' }, h('legend', {}, 'When a message fails for good'),
    field('Alert after this many failures', count, '1: on every failure.'),
    field('within this many minutes', minutes, 'After an alert the channel waits this long, then counts again.'));
  const slot = h('div');
  const status = h('div', { role: 'status' });
  const form = h('form', { class: 'card', novalidate: true, 'aria-labelledby': 'al-h' },
    h('h2', { id: 'al-h' }, ch.id ? `Edit ${ch.name}` : 'New channel'),
    field('Name', name), field('Type', type), h('div', { class: 'field checkbox' }, active, h('label', { for: active.id }, 'Active')),
    slot, events, thresholds, status,
    h('div', { class: 'actions' },
      h('button', { class: 'button button-primary', type: 'submit' }, 'Save channel'),
      h('button', { class: 'button', type: 'button', onclick: (e) => test(e.target) }, 'Send a test alert'),
      ch.id ? h('button', { class: 'button button-link-delete', type: 'button', onclick: async () => {
        if (!confirm(`Delete ${ch.name}?`)) return;
        await api.del(`/notifications/${ch.id}`); location.hash = '#/alerts';
      } }, 'Delete') : null));
  const settingsFields = () => {
    const s = ch.type === type.value ? ch.settings || {} : {};
    replace(slot, TYPES[type.value].map(([k, label, secret]) =>
      field(label, k === 'connection_id'
        ? h('select', { id: `al-${k}`, name: k, value: String(s[k] ?? '') }, h('option', { value: '' }, 'Choose a connection…'),
          connections.map((c) => h('option', { value: String(c.id) }, c.name)))
        : h('input', { id: `al-${k}`, name: k, type: secret ? 'password' : 'text', autocomplete: 'off', value: s[k] ?? '' }),
        secret && s[k] === MASK ? 'Stored; leave as is to keep it.' : null)));
    if (type.value === 'telegram') slot.append(h('button', { class: 'button', type: 'button', onclick: detect }, 'Find chats'), h('div', { id: 'al-chats' }));
  };
  const body = () => {
    const settings = {};
    for (const [k] of TYPES[type.value]) {
      const v = form.elements[k].value.trim();
      if (v !== '') settings[k] = k === 'connection_id' ? Number(v) : v;
    }
    return { name: name.value, type: type.value, is_active: active.checked, settings,
      events: [...form.querySelectorAll('input[name=events]:checked')].map((x) => x.value),
      threshold_count: whole(count.value, 1), threshold_minutes: whole(minutes.value, 0) };
  };
  const fail = (err) => replace(status, errorNotice(err, showErrors(form, flatten(err.errors))));
  async function test(btn) {
    try {
      const res = await busy(btn, api.post('/notifications/test', ch.id ? { id: ch.id, channel: body() } : { channel: body() }));
      replace(status, notice(res.success ? 'success' : 'error', res.success ? 'Test alert sent.' : `The channel refused: ${res.error || res.message}`));
    } catch (err) { fail(err); }
  }
  async function detect(e) {
    const out = form.querySelector('#al-chats');
    try {
      const res = await busy(e.target, api.post('/notifications/telegram/detect-chats', { bot_token: form.elements.bot_token.value }));
      replace(out, res.chats.length ? h('ul', {}, res.chats.map((c) => h('li', {},
        h('button', { class: 'button-link', type: 'button', onclick: () => (form.elements.chat_id.value = c.id) }, `Use ${c.title || c.username || c.id}`), ` (${c.type}, ${c.id})`)))
        : notice('info', 'No chats yet: add the bot to a group or send it a message, then try again.'));
    } catch (err) { fail(err); }
  }
  type.addEventListener('change', settingsFields);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await busy(e.submitter, ch.id ? api.put(`/notifications/${ch.id}`, body()) : api.post('/notifications', body()));
      location.hash = '#/alerts';
      if (ch.id) await render(root, []);
      flash('success', 'Channel saved.');
    } catch (err) { fail(err); }
  });
  settingsFields();
  return form;
}

// flatten maps "settings.webhook_url" style keys to the control names.
const flatten = (errs) => Object.fromEntries(Object.entries(errs || {}).map(([k, v]) => [k.replace(/^settings\./, ''), v]));
