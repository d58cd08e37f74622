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

/** when formats an RFC 3339 time for a person, in the browser's locale. */
export function when(t) {
  if (!t) return '—';
  const d = new Date(t);
  return isNaN(d) ? t : d.toLocaleString();
}

/** badge shows a status word with a colour class. */
export const badge = (s) => h('span', { class: `badge badge-${s || 'unknown'}` }, s || 'unknown');

/** table builds a table from column headers and rows of cells. */
export function table(caption, heads, rows) {
  return h('table', { class: 'widefat' },
    h('caption', { class: 'screen-reader-text' }, caption),
    h('thead', {}, h('tr', {}, heads.map((x) => h('th', { scope: 'col' }, x)))),
    h('tbody', {}, rows.length ? rows.map((r) => h('tr', {}, r.map((c) => h('td', {}, c))))
      : h('tr', {}, h('td', { colspan: heads.length, class: 'empty' }, 'Nothing here yet.'))));
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
