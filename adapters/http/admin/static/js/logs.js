// logs.js: the email logs: search, status and date filters, pagination
// that stays honest past the count cap (X-Mailsvc-Total-Capped), a note
// while the search's index is still being filled (X-Mailsvc-Search-Partial), the
// bulk actions that apply to the status shown (resend and delete; release
// and delete for captured mail; release and discard all matching for mail
// the flood guard held), and the detail view with the body in a sandboxed
// frame, headers, attempts and provider events.
import * as api from './api.js';
import { h, replace, heading, table, badge, when, words, notice, field, showErrors, errorNotice, flash, busy } from './ui.js';

// The connections' names by id, read once per screen: a log names its
// connection, never "#1".
async function connectionNames() {
  const list = await api.get('/connections', { per_page: 100 }).catch(() => []);
  return new Map((Array.isArray(list) ? list : []).map((c) => [c.id, c.name]));
}
const connLink = (names, id) => (id ? h('a', { href: `#/connections/${id}` }, names.get(id) || `Connection ${id} (deleted)`) : '—');

// isHeld tells a message the staging guard captured or the flood guard
// held: it waits for a person and went through no connection.
const isHeld = (status) => status === 'captured' || status === 'held';

/** connectionCell names the connection a log went through; a held
 * message says that it was not sent rather than showing no connection. */
function connectionCell(names, log) {
  if (isHeld(log.status)) return h('span', { class: 'muted not-sent' }, log.simulated ? 'Simulated, not sent' : 'Held, not sent');
  return connLink(names, log.sent_connection_id || log.connection_id);
}

const filters = { search: '', status: '', date_from: '', date_to: '', page: 1, per_page: 20 };

/** render shows the list, or one log for #/logs/{id}. */
export async function render(root, [logID]) {
  if (logID) return detail(root, Number(logID));
  // #/logs?status=captured (the staging guard's banner) and
  // #/logs?status=held (the dashboard's flood notice) open that filter.
  const asked = new URLSearchParams(location.hash.split('?')[1] || '').get('status');
  if (asked) { filters.status = asked; filters.page = 1; }
  const results = h('div', { id: 'log-results' });
  const input = (name, label, type = 'text') => field(label, h('input', { id: `log-${name}`, name, type, value: filters[name] }));
  const status = h('select', { id: 'log-status', name: 'status' },
    ['', 'queued', 'sending', 'delivered', 'failed', 'captured', 'held'].map((s) => h('option', { value: s }, s ? words(s) : 'Any status')));
  status.value = filters.status;
  const form = h('form', { class: 'filters card', role: 'search', 'aria-label': 'Filter the logs', novalidate: true },
    input('search', 'Search (address, @domain, start or part of an address, subject words)', 'search'), field('Status', status),
    input('date_from', 'From', 'date'), input('date_to', 'To', 'date'),
    h('div', { class: 'actions' }, h('button', { class: 'button button-primary', type: 'submit' }, 'Filter')));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    for (const k of ['search', 'status', 'date_from', 'date_to']) filters[k] = form.elements[k].value.trim();
    filters.page = 1;
    load(form, results);
  });
  replace(root, heading('Email logs'), form, results);
  await load(form, results);
}

async function load(form, results) {
  let page;
  let names;
  results.setAttribute('aria-busy', 'true');
  try {
    [page, names] = await Promise.all([api.list('/logs', filters), connectionNames()]);
    showErrors(form, {});
  } catch (err) {
    return replace(results, errorNotice(err, showErrors(form, err.errors)));
  } finally {
    results.removeAttribute('aria-busy');
  }
  const sel = new Set();
  const bulkBar = h('div', { class: 'toolbar bulk' });
  // The bulk actions are those that apply to the rows shown. Held mail is
  // not resent: the staging guard's captured messages are released (the
  // ticked ones, POST /capture/release) or deleted unsent; the flood
  // guard's are released or discarded by the current filters (POST
  // /logs/held/release, /logs/held/discard), which take no ids, so its
  // rows carry no boxes to tick.
  const floodHeld = filters.status === 'held';
  const bulkButtons = floodHeld ? [] : filters.status === 'captured' ? [
    h('button', { class: 'button button-primary', type: 'button', id: 'release-selected', disabled: true, onclick: (e) => bulk(e.target, 'release', sel, form, results) }, 'Release selected'),
    h('button', { class: 'button button-link-delete', type: 'button', id: 'delete-selected', disabled: true, onclick: (e) => bulk(e.target, 'delete', sel, form, results) }, 'Delete selected, not sent'),
  ] : [
    h('button', { class: 'button', type: 'button', id: 'resend-selected', disabled: true, onclick: (e) => bulk(e.target, 'resend', sel, form, results) }, 'Resend selected'),
    h('button', { class: 'button button-link-delete', type: 'button', id: 'delete-selected', disabled: true, onclick: (e) => bulk(e.target, 'delete', sel, form, results) }, 'Delete selected'),
  ];
  const heldButtons = floodHeld && page.total > 0 ? [
    h('button', { class: 'button button-primary', type: 'button', id: 'held-release', onclick: (e) => held(e.target, 'release', form, results) }, 'Release all matching'),
    h('button', { class: 'button button-link-delete', type: 'button', id: 'held-discard', onclick: (e) => held(e.target, 'discard', form, results) }, 'Discard all matching'),
  ] : [];
  const toggle = (id, on) => { on ? sel.add(id) : sel.delete(id); bulkButtons.forEach((b) => (b.disabled = !sel.size)); };
  const all = h('input', { type: 'checkbox', 'aria-label': 'Select all on this page', onchange: (e) => {
    results.querySelectorAll('tbody input[type=checkbox]').forEach((b) => { b.checked = e.target.checked; toggle(Number(b.value), b.checked); });
  } });
  const cells = (l) => [
    badge(l.status), h('a', { href: `#/logs/${l.id}` }, l.message.subject || '(no subject)'),
    (l.message.to || []).map((a) => a.email).join(', '), connectionCell(names, l), l.source || '', when(l.created_at)];
  const heads = ['Status', 'Subject', 'To', 'Connection', 'Source', 'Created'];
  let t;
  if (bulkButtons.length) {
    t = table('Email logs', ['', ...heads], page.items.map((l) => [
      h('input', { type: 'checkbox', value: l.id, 'aria-label': `Select log ${l.id}`, onchange: (e) => toggle(l.id, e.target.checked) }), ...cells(l)]));
    t.querySelector('thead th').replaceChildren(all);
  } else {
    t = table('Email logs', heads, page.items.map(cells));
  }
  bulkBar.append(...heldButtons, ...bulkButtons);
  const partial = page.partial
    ? h('div', { id: 'log-search-partial' }, notice('warning', 'The search index is still being filled for older logs: this search may not find all of them yet. Try again in a few minutes.'))
    : null;
  replace(results, partial, bulkBar, t, pager(page, () => load(form, results)));
}

function pager(page, reload) {
  const total = page.capped ? `more than ${page.total.toLocaleString()}` : page.total.toLocaleString();
  const pages = page.capped ? `${page.pages.toLocaleString()}+` : Math.max(1, page.pages).toLocaleString();
  const go = (n) => { filters.page = n; reload(); };
  const jump = h('input', { id: 'log-page', type: 'number', min: 1, value: filters.page, class: 'small' });
  return h('nav', { class: 'pager', 'aria-label': 'Pages' },
    h('span', { class: 'muted' }, `${total} logs · page ${filters.page} of ${pages}`),
    h('button', { class: 'button', type: 'button', disabled: filters.page <= 1, onclick: () => go(1) }, '« First'),
    h('button', { class: 'button', type: 'button', disabled: filters.page <= 1, onclick: () => go(filters.page - 1) }, '‹ Previous'),
    h('button', { class: 'button', type: 'button', disabled: !page.capped && filters.page >= page.pages, onclick: () => go(filters.page + 1) }, 'Next ›'),
    h('label', { for: jump.id }, 'Go to page'), jump,
    h('button', { class: 'button', type: 'button', onclick: () => go(Math.max(1, Number(jump.value) || 1)) }, 'Go'));
}

async function bulk(btn, action, sel, form, results) {
  const ids = [...sel];
  if (action === 'delete' && !confirm(`Delete ${ids.length} log(s)?`)) return;
  try {
    const call = action === 'delete' ? api.del('/logs', { ids }) : action === 'release' ? api.post('/capture/release', { ids }) : api.post('/logs/resend', { ids });
    const res = await busy(btn, call);
    await load(form, results);
    if (action !== 'resend') window.dispatchEvent(new Event('mailsvc:capture'));
    flash('success', action === 'delete' ? `${res.deleted} deleted.` : action === 'release' ? `${res.released} released: sent once each.` : `${res.resent} queued again.`);
  } catch (err) { flash('error', Object.values(err.errors)[0] || err.message); }
}

/** held releases or discards the held messages the current filters
 * match: released ones are sent once each, discarded ones fail. */
async function held(btn, action, form, results) {
  if (action === 'discard' && !confirm('Discard every held message these filters match? They will not be sent.')) return;
  const body = { status: 'held', search: filters.search, date_from: filters.date_from, date_to: filters.date_to };
  try {
    const res = await busy(btn, api.post(`/logs/held/${action}`, body));
    await load(form, results);
    flash('success', action === 'release' ? `${res.released} released: sent once each.` : `${res.discarded} discarded: not sent.`);
  } catch (err) { flash('error', Object.values(err.errors || {})[0] || err.message); }
}

/** withInlineImages puts each inline image the log kept (its preview, a
 * data: URI) in place of the HTML's whole cid: references to it. */
function withInlineImages(html, attachments) {
  for (const a of attachments || []) {
    if (!a.inline || !a.content_id || !a.preview) continue;
    const id = a.content_id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    html = html.replace(new RegExp(`cid:${id}(?=["'\\s)>]|$)`, 'g'), () => a.preview);
  }
  return html;
}

/** bodyFrame renders an HTML body with no scripts, no forms and no remote
 * loads: an empty sandbox plus a CSP that allows only inline styles and
 * data: images (the inline images the log kept among them). */
function bodyFrame(html) {
  const csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:";
  const doc = `<!doctype html><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${csp}"><base target="_blank">${html}`;
  return h('iframe', { class: 'body-frame', title: 'Message body (HTML)', sandbox: '', referrerpolicy: 'no-referrer', srcdoc: doc });
}

/** bodyNote says what the log kept of the body (log_body, docs/logs.md). */
function bodyNote(log) {
  const n = log.redacted_count || 0;
  const redacted = n ? `${n} one-time ${n === 1 ? 'value was' : 'values were'} replaced with [redacted]; the message sent had ${n === 1 ? 'it' : 'them'}.` : '';
  switch (log.body_mode) {
    case 'none': return 'The log keeps no body for this message (log body: none).';
    case 'redacted': return [redacted, log.attachments_kept ? '' : 'Only the names, types and sizes of the attachments were kept.'].filter(Boolean).join(' ');
    case '': return n ? `Shown as the log will keep it: ${redacted}` : '';
    default: return '';
  }
}

/** resendToForm sends the logged message again to other recipients
 * (POST /logs/{id}/resend with to, cc and bcc, which replace the
 * original ones together); the copy is a new log, linked in the answer. */
function resendToForm(log) {
  const list = (v) => v.split(/[,\n]/).map((a) => a.trim()).filter(Boolean);
  const input = (name, label) => field(label, h('input', { id: `rs-${name}`, name, type: 'text', autocomplete: 'off' }));
  const out = h('div', { role: 'status' });
  const form = h('form', { class: 'card', id: 'resend-to', novalidate: true, 'aria-labelledby': 'rs-h' },
    h('h2', { id: 'rs-h' }, 'Resend to other recipients'),
    h('p', { class: 'help' }, 'Comma-separated addresses. They replace the original To, Cc and Bcc; the copy gets its own log.'),
    input('to', 'To'), input('cc', 'Cc'), input('bcc', 'Bcc'), out,
    h('div', { class: 'actions' }, h('button', { class: 'button', type: 'submit', disabled: log.status === 'queued' || log.status === 'sending' || isHeld(log.status) }, 'Send to these recipients')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = { to: list(form.elements.to.value), cc: list(form.elements.cc.value), bcc: list(form.elements.bcc.value) };
    try {
      const res = await busy(e.submitter, api.post(`/logs/${log.id}/resend`, body));
      showErrors(form, {});
      replace(out, notice('success', 'Queued to be sent to the new recipients: ', h('a', { href: `#/logs/${res.new_id}` }, `log #${res.new_id}`), '.'));
    } catch (err) { replace(out, errorNotice(err, showErrors(form, err.errors))); }
  });
  return form;
}

// retrying tells when a queued message that failed before is tried again.
const retrying = (log) => log.status === 'queued' && (log.attempts > 0
  || (!!log.last_error && (log.attempts_history || []).some((a) => a.outcome === 'rate_limited'))); // a 421 uses no attempt

// headerRows answers the header fields of a message: its stored header
// block when it came whole, else the fields it was built from and its
// own extra headers.
function headerRows(m, addr) {
  if (m.raw_header) {
    return m.raw_header.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/).filter(Boolean).map((line) => {
      const at = line.indexOf(':');
      return at < 0 ? [line, ''] : [line.slice(0, at), line.slice(at + 1).trim()];
    });
  }
  const rows = [['From', addr([m.from])], ['To', addr(m.to)]];
  if ((m.cc || []).length) rows.push(['Cc', addr(m.cc)]);
  if ((m.reply_to || []).length) rows.push(['Reply-To', addr(m.reply_to)]);
  rows.push(['Subject', m.subject || '']);
  return rows.concat((m.headers || []).map((x) => [x.name, x.value]));
}

/** heldAction is what a held message's own screen offers instead of a
 * resend: a captured one is released (POST /capture/release), one the
 * flood guard held is released or discarded on the held list, whose
 * actions take the list's filters. Other messages have none (null). */
function heldAction(log, out) {
  if (log.status === 'captured') {
    return h('button', { class: 'button button-primary', type: 'button', id: 'log-release', onclick: async (e) => {
      try {
        await busy(e.target, api.post('/capture/release', { ids: [log.id] }));
        replace(out, notice('success', 'Released: it is sent once.'));
        window.dispatchEvent(new Event('mailsvc:capture'));
      } catch (err) { replace(out, errorNotice(err)); }
    } }, 'Release');
  }
  if (log.status === 'held') return h('a', { class: 'button button-primary', id: 'log-held-list', href: '#/logs?status=held' }, 'Release or discard held mail');
  return null;
}

async function detail(root, id) {
  const [log, names] = await Promise.all([api.get(`/logs/${id}`), connectionNames()]);
  const m = log.message || {};
  const addr = (xs) => (xs || []).map((a) => (a.name ? `${a.name} <${a.email}>` : a.email)).join(', ') || '—';
  const out = h('div', { role: 'status' });
  const events = h('section', { class: 'card', 'aria-labelledby': 'ev-h' }, h('h2', { id: 'ev-h' }, 'Provider events'));
  const dl = (pairs) => h('dl', { class: 'facts' }, pairs.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
  replace(root,
    heading(m.subject || '(no subject)',
      heldAction(log, out) || h('button', { class: 'button button-primary', type: 'button', disabled: log.status === 'queued' || log.status === 'sending', onclick: async (e) => {
        try { await busy(e.target, api.post(`/logs/${id}/resend`, {})); replace(out, notice('success', 'Queued to be sent again.')); } catch (err) { replace(out, errorNotice(err)); }
      } }, 'Resend'),
      h('button', { class: 'button button-link-delete', type: 'button', onclick: async () => {
        if (!confirm('Delete this log?')) return;
        try { await api.del(`/logs/${id}`); location.hash = '#/logs'; flash('success', 'Log deleted.'); } catch (err) { replace(out, errorNotice(err)); }
      } }, 'Delete'),
      h('a', { class: 'button', href: '#/logs' }, 'Back to the logs')),
    out,
    h('section', { class: 'card' }, dl([
      ['Status', badge(log.status)], ['From', addr([m.from])], ['To', addr(m.to)], ['Cc', addr(m.cc)], ['Bcc', addr(m.bcc)],
      ['Created', when(log.created_at)], ['Delivered', when(log.delivered_at)], ['Attempts', String(log.attempts)],
      ...(retrying(log) ? [['Next attempt', h('span', { id: 'log-next-attempt' }, when(log.next_attempt_at))]] : []),
      ['Connection', connectionCell(names, log)],
      ['Provider id', log.provider_message_id || '—'], ['Last error', log.last_error || '—'], ['Source', log.source || '—'],
      ...(log.resent_from ? [['Resent from', h('a', { href: `#/logs/${log.resent_from}` }, `#${log.resent_from}`)]] : [])])),
    resendToForm(log),
    h('section', { class: 'card', 'aria-labelledby': 'body-h' }, h('h2', { id: 'body-h' }, 'Body'),
      bodyNote(log) ? h('p', { class: 'help' }, bodyNote(log)) : null,
      m.html ? bodyFrame(withInlineImages(m.html, log.attachments)) : null,
      m.text ? h('pre', { class: 'body-text', tabindex: '0', 'aria-label': 'Message body (text)' }, m.text) : null,
      !m.html && !m.text ? h('p', {}, 'No body.') : null,
      (log.attachments || []).length ? table('Attachments', ['File', 'Type', 'Size', 'Shown as'], log.attachments.map((a) =>
        [a.filename, a.content_type, `${a.size} bytes`, a.inline ? `Inline image${a.content_id ? ` (cid:${a.content_id})` : ''}` : 'Attachment'])) : null),
    h('section', { class: 'card', 'aria-labelledby': 'hdr-h' }, h('h2', { id: 'hdr-h' }, 'Headers'),
      table('Headers', ['Name', 'Value'], headerRows(m, addr))),
    h('section', { class: 'card', 'aria-labelledby': 'att-h' }, h('h2', { id: 'att-h' }, 'Attempts'),
      table('Attempts', ['When', 'Connection', 'Outcome', 'Response or error', 'Duration'], (log.attempts_history || []).map((a) =>
        [when(a.at), connLink(names, a.connection_id), badge(a.outcome), a.error || a.response || '', `${a.duration_ms} ms`]), 'Not tried yet.')),
    events);
  try {
    const ev = await api.get(`/pro/logs/${id}/events`, null, { quiet: true });
    events.append(table('Provider events', ['When', 'Provider', 'Event', 'Detail'], ev.map((e) =>
      [when(e.at), e.provider, badge(e.event), Object.entries(e.detail || {}).map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : v}`).join('; ')])));
  } catch { events.remove(); }
  root.querySelector('h1').focus();
}
