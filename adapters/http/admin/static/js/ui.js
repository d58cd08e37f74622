// ui.js: a few DOM helpers shared by the screens. No framework: each
// screen builds its elements with h() and replaces them when data changes.

/** h builds an element: h('button', {class: 'x', onclick: f}, 'text', child). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  let value;
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'value') { value = v; continue; }
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k in el && k !== 'list' && k !== 'form' && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  if (value !== undefined) el.value = value; // after the options of a select
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** replace empties el and fills it with children. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

let uid = 0;
/** id returns a fresh element id with the given prefix. */
export const id = (p = 'f') => `${p}-${++uid}`;

/** field wraps a labelled control with its help and error slots. */
export function field(label, control, help) {
  if (!control.id) control.id = id();
  const err = h('p', { class: 'field-error', id: control.id + '-err', role: 'alert' });
  const parts = [h('label', { for: control.id }, label), control];
  if (help) {
    const hid = control.id + '-help';
    control.setAttribute('aria-describedby', hid);
    parts.push(h('p', { class: 'help', id: hid }, help));
  }
  parts.push(err);
  return h('div', { class: 'field', dataset: { key: control.name || '' } }, parts);
}

/** showErrors puts each message of errors (data.errors) next to the control
 * named by its key inside form; it returns the messages no control took. */
export function showErrors(form, errors) {
  form.querySelectorAll('.field-error').forEach((e) => (e.textContent = ''));
  form.querySelectorAll('[aria-invalid]').forEach((e) => e.removeAttribute('aria-invalid'));
  const rest = {};
  let first = null;
  for (const [key, msg] of Object.entries(errors || {})) {
    const name = key.replace(/^settings\./, '');
    const ctl = form.querySelector(`[name="${CSS.escape(name)}"]`);
    const slot = ctl && form.querySelector(`#${CSS.escape(ctl.id)}-err`);
    if (!slot) { rest[key] = msg; continue; }
    slot.textContent = msg;
    const fold = ctl.closest('details'); // a refused field under "Advanced" is shown
    if (fold) fold.open = true;
    ctl.setAttribute('aria-invalid', 'true');
    ctl.setAttribute('aria-errormessage', slot.id);
    first = first || ctl;
  }
  if (first) first.focus();
  return rest;
}

/** notice returns a WordPress-style notice ('success', 'error', 'info'). */
export function notice(kind, ...text) {
  return h('div', { class: `notice notice-${kind}`, role: kind === 'error' ? 'alert' : 'status' }, ...text);
}

/** errorNotice shows an API error as a sentence, with any field messages
 * that no control on the screen took, never as raw JSON. */
export function errorNotice(err, rest) {
  const extra = Object.entries(rest || err.errors || {}).map(([k, v]) => h('li', {}, `${k}: ${v}`));
  return notice('error', err.message || String(err), extra.length ? h('ul', {}, extra) : null);
}

/** flash shows a notice at the top of the screen for a few seconds, until
 * the person leaves the screen it belongs to (the address at the time of
 * the call: an action that opens another screen calls it after). */
export function flash(kind, text) {
  const box = document.getElementById('flash');
  if (!box) return;
  const n = notice(kind, text);
  n.dataset.hash = location.hash;
  box.replaceChildren(n);
  setTimeout(() => n.remove(), 6000);
}

// The site's date and time format and zone (GET /site/format), WordPress's
// defaults until read.
let site = { date_format: 'F j, Y', time_format: 'g:i a', timezone_string: '', gmt_offset: 0 };

/** loadSiteFormat reads the site's date and time format once; the
 * defaults stay when the service does not say (an older one). */
export async function loadSiteFormat(get) {
  try { site = { ...site, ...(await get('/site/format', null, { quiet: true })) }; } catch { /* the defaults */ }
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const pad = (n) => String(n).padStart(2, '0');

/** ENGLISH_DATE_NAMES are the names dates are written with unless the
 * bridge hands over the site's (WordPress's own English ones). */
export const ENGLISH_DATE_NAMES = Object.freeze({
  month: MONTHS, month_genitive: MONTHS, month_abbrev: MONTHS.map((m) => m.slice(0, 3)),
  weekday: DAYS, weekday_abbrev: DAYS.map((d) => d.slice(0, 3)),
  meridiem: { am: 'am', pm: 'pm', AM: 'AM', PM: 'PM' }, decline: false,
});

// The names the screens write dates with: WordPress's $wp_locale in the
// language wp-admin is shown in, as the Mail page hands them over
// (setDateNames); English standalone.
let dateNames = ENGLISH_DATE_NAMES;

/**
 * readDateNames answers the month, weekday and am/pm names of given (the
 * bridge's mailsvc_bridge_date_names()): each list that is there whole
 * (12 months, 7 days, each a non-empty string) replaces the English one,
 * anything else keeps English.
 */
export function readDateNames(given) {
  const list = (v, n, fallback) => (Array.isArray(v) && v.length === n && v.every((x) => typeof x === 'string' && x !== '') ? [...v] : fallback);
  const g = given && typeof given === 'object' ? given : {};
  const m = g.meridiem && typeof g.meridiem === 'object' ? g.meridiem : {};
  const word = (k) => (typeof m[k] === 'string' && m[k] !== '' ? m[k] : ENGLISH_DATE_NAMES.meridiem[k]);
  const month = list(g.month, 12, ENGLISH_DATE_NAMES.month);
  return {
    month, month_genitive: list(g.month_genitive, 12, month), month_abbrev: list(g.month_abbrev, 12, ENGLISH_DATE_NAMES.month_abbrev),
    weekday: list(g.weekday, 7, ENGLISH_DATE_NAMES.weekday), weekday_abbrev: list(g.weekday_abbrev, 7, ENGLISH_DATE_NAMES.weekday_abbrev),
    meridiem: { am: word('am'), pm: word('pm'), AM: word('AM'), PM: word('PM') }, decline: g.decline === true,
  };
}

/** setDateNames makes the screens write dates with the site's names
 * (readDateNames). */
export function setDateNames(given) { dateNames = readDateNames(given); }

// wall answers the site's wall-clock time of date as the UTC fields of a
// Date, and the zone's abbreviation: in an IANA zone through Intl, else
// shifted by the UTC offset in hours.
function wall(date, zone, offset) {
  if (zone) {
    try {
      const parts = Object.fromEntries(new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', timeZoneName: 'short',
        year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' })
        .formatToParts(date).map((p) => [p.type, p.value]));
      return { d: new Date(Date.UTC(+parts.year, +parts.month - 1, +parts.day, +parts.hour % 24, +parts.minute, +parts.second)), abbr: parts.timeZoneName };
    } catch { /* an unknown zone: the offset */ }
  }
  const mins = Math.round((Number(offset) || 0) * 60);
  const abbr = mins === 0 ? 'UTC' : `${mins < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(mins) / 60))}:${pad(Math.abs(mins) % 60)}`;
  return { d: new Date(date.getTime() + mins * 60000), abbr };
}

/**
 * formatDate writes date as WordPress's wp_date() writes format, in the
 * zone (an IANA name) or, without one, at offset hours from UTC, with
 * names (readDateNames: the site's, else English) for F, M, D, l, a and
 * A. It knows d, j, S, m, n, F, M, Y, y, D, l, N, w, H, G, h, g, i, s,
 * a, A, T and U; a backslash writes the next character as it is, other
 * characters are copied. In a language that declines months, a month
 * after a day number ("j F", "d. F") takes its genitive, as
 * wp_maybe_decline_date() has it.
 */
export function formatDate(date, format, zone = '', offset = 0, names = dateNames) {
  const { d, abbr } = wall(date, zone, offset);
  const day = d.getUTCDate(); const mon = d.getUTCMonth(); const hr = d.getUTCHours(); const wd = d.getUTCDay();
  const genitive = names.decline && /[dj]\.? F/.test(format);
  const suffix = (day % 10 === 1 && day !== 11) ? 'st' : (day % 10 === 2 && day !== 12) ? 'nd' : (day % 10 === 3 && day !== 13) ? 'rd' : 'th';
  const codes = {
    d: () => pad(day), j: () => String(day), S: () => suffix,
    m: () => pad(mon + 1), n: () => String(mon + 1), F: () => (genitive ? names.month_genitive : names.month)[mon], M: () => names.month_abbrev[mon],
    Y: () => String(d.getUTCFullYear()), y: () => pad(d.getUTCFullYear() % 100),
    D: () => names.weekday_abbrev[wd], l: () => names.weekday[wd], N: () => String(wd || 7), w: () => String(wd),
    H: () => pad(hr), G: () => String(hr), h: () => pad(hr % 12 || 12), g: () => String(hr % 12 || 12),
    i: () => pad(d.getUTCMinutes()), s: () => pad(d.getUTCSeconds()),
    a: () => names.meridiem[hr < 12 ? 'am' : 'pm'], A: () => names.meridiem[hr < 12 ? 'AM' : 'PM'], T: () => abbr, U: () => String(Math.floor(date.getTime() / 1000)),
  };
  let out = '';
  for (let i = 0; i < format.length; i++) {
    const c = format[i];
    if (c === '\\') { out += format[++i] ?? ''; continue; }
    out += codes[c] ? codes[c]() : c;
  }
  return out;
}

/** when formats an RFC 3339 time for a person, in the site's date and
 * time format and time zone (WordPress's Settings → General). */
export function when(t) {
  if (!t) return '—';
  const d = new Date(t);
  if (isNaN(d) || d.getUTCFullYear() < 1971) return isNaN(d) ? t : '—';
  return formatDate(d, `${site.date_format} ${site.time_format}`, site.timezone_string, site.gmt_offset);
}

// Statuses, outcomes and health in words; a word not listed shows as it is.
const WORDS = {
  queued: 'Queued', sending: 'Sending', delivered: 'Delivered', failed: 'Failed', captured: 'Held (captured)', held: 'Held by the flood guard',
  temporary_failure: 'Temporary failure, will retry', permanent_failure: 'Failed for good',
  rate_limited: 'Slowed down by the provider, will retry', uncertain: 'No answer from the provider, will check',
  simulated: 'Simulated, not sent', healthy: 'Healthy', degraded: 'Degraded', failing: 'Failing', down: 'Down',
  unknown: 'Not checked yet', active: 'Active', inactive: 'Off', authorized: 'Authorized', pending: 'Waiting for authorization',
  needs_authorization: 'Needs authorization', expired: 'Expired', ok: 'OK', warning: 'Warning', error: 'Error',
};
/** words answers a status, outcome or health key in words. */
export const words = (s) => WORDS[s] || s;

/** badge shows a status in words with its key's colour class. */
export const badge = (s) => h('span', { class: `badge badge-${s || 'unknown'}`, dataset: { status: s || 'unknown' } }, words(s || 'unknown'));

/** table builds a table from column headers and rows of cells. Each cell
 * carries its column's header (data-colname), so that on a small screen
 * the rows stack as WordPress's list tables do, every value under its
 * header word (app.css). */
export function table(caption, heads, rows, empty = 'Nothing here yet.') {
  const head = (i) => (typeof heads[i] === 'string' ? heads[i] : '');
  return h('table', { class: 'widefat striped list-table' },
    h('caption', { class: 'screen-reader-text' }, caption),
    h('thead', {}, h('tr', {}, heads.map((x) => h('th', { scope: 'col' }, x)))),
    h('tbody', {}, rows.length ? rows.map((r) => h('tr', {}, r.map((c, i) => h('td', { dataset: { colname: head(i) } }, c))))
      : h('tr', {}, h('td', { colspan: heads.length, class: 'empty' }, empty))));
}

/** busy disables a button while promise runs and returns its result. */
export async function busy(button, promise) {
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  try { return await promise; } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
  }
}

/** heading is a screen's title row with optional actions. */
export const heading = (title, ...actions) =>
  h('div', { class: 'screen-head' }, h('h1', { tabindex: '-1' }, title), ...actions);
