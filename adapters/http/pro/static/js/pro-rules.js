// pro-rules.js: routing rules: list in priority order (reorder with the
// Up/Down buttons), bulk enable/disable/delete, the rule editor with its
// conditions, and the rule tester.
import * as api from './api.js';
import { h, replace, table, badge, field, showErrors, errorNotice, notice, flash, busy } from './ui.js';

const FIELDS = ['to', 'cc', 'bcc', 'from', 'reply_to', 'subject', 'source', 'has_attachment', 'header:'];
const OPS = ['is', 'is_not', 'contains', 'not_contains', 'starts_with', 'ends_with', 'matches', 'exists'];

/** render shows the rules, the editor (#/pro/rules/{id|new}) and the tester. */
export async function render(root, [which]) {
  const [rules, conns] = await Promise.all([api.get('/pro/routing-rules', { per_page: 100 }), api.list('/connections', { per_page: 100 })]);
  const sel = new Set();
  const reorder = async (i, dir) => {
    const ids = rules.map((r) => r.id);
    [ids[i], ids[i + dir]] = [ids[i + dir], ids[i]];
    try { await api.post('/pro/routing-rules/reorder', { ids }); render(root, []); } catch (err) { flash('error', err.message); }
  };
  const bulk = (action) => async (e) => {
    try { await busy(e.target, api.post('/pro/routing-rules/bulk', { action, ids: [...sel] })); render(root, []); } catch (err) { flash('error', err.message); }
  };
  const cname = (id) => (conns.items.find((c) => c.id === id) || { name: `#${id}` }).name;
  const editing = which === 'new' ? { conditions: [], is_active: true } : rules.find((r) => String(r.id) === which);
  replace(root,
    h('div', { class: 'toolbar' }, h('a', { class: 'button button-primary', href: '#/pro/rules/new' }, 'Add rule'),
      ['enable', 'disable', 'delete'].map((a) => h('button', { class: 'button', type: 'button', onclick: bulk(a) }, `${a[0].toUpperCase()}${a.slice(1)} selected`))),
    table('Routing rules', ['', 'Priority', 'Name', 'Connection', 'State', 'Order'], rules.map((r, i) => [
      h('input', { type: 'checkbox', 'aria-label': `Select ${r.name}`, onchange: (e) => (e.target.checked ? sel.add(r.id) : sel.delete(r.id)) }),
      String(r.priority), h('a', { href: `#/pro/rules/${r.id}` }, r.name), cname(r.connection_id), badge(r.is_active ? 'active' : 'inactive'),
      h('span', {}, h('button', { class: 'button', type: 'button', disabled: i === 0, 'aria-label': `Move ${r.name} up`, onclick: () => reorder(i, -1) }, '↑'),
        h('button', { class: 'button', type: 'button', disabled: i === rules.length - 1, 'aria-label': `Move ${r.name} down`, onclick: () => reorder(i, 1) }, '↓'))])),
    editing ? editor(editing, conns.items, root) : null,
    tester(rules));
}

function conditionRow(c = {}) {
  const n = Math.random().toString(36).slice(2, 7);
  const f = h('select', { id: `cf-${n}`, name: 'field' }, FIELDS.map((x) => h('option', { value: x }, x === 'header:' ? 'header…' : x)));
  const isHeader = (c.field || '').startsWith('header:');
  f.value = isHeader ? 'header:' : c.field || 'subject';
  const hn = h('input', { id: `ch-${n}`, name: 'header', class: 'small', value: isHeader ? c.field.slice(7) : '' });
  const op = h('select', { id: `co-${n}`, name: 'operator' }, OPS.map((x) => h('option', { value: x }, x)));
  op.value = c.operator || 'contains';
  const v = h('input', { id: `cv-${n}`, name: 'value', value: c.value ?? '' });
  const row = h('li', { class: 'condition' }, h('label', { for: f.id }, 'Field'), f, h('label', { for: hn.id }, 'Header name'), hn,
    h('label', { for: op.id }, 'Operator'), op, h('label', { for: v.id }, 'Value'), v,
    h('button', { class: 'button', type: 'button', 'aria-label': 'Remove this condition', onclick: () => row.remove() }, '×'));
  row.read = () => ({ field: f.value === 'header:' ? `header:${hn.value}` : f.value, operator: op.value, ...(op.value === 'exists' ? {} : { value: v.value }) });
  return row;
}

function editor(rule, conns, root) {
  const name = h('input', { id: 'rule-name', name: 'name', value: rule.name || '' });
  const conn = h('select', { id: 'rule-conn', name: 'connection_id' }, conns.map((c) => h('option', { value: String(c.id) }, c.name)));
  if (rule.connection_id) conn.value = String(rule.connection_id);
  const prio = h('input', { id: 'rule-prio', name: 'priority', type: 'number', class: 'small', value: rule.priority ?? '' });
  const active = h('input', { id: 'rule-active', name: 'is_active', type: 'checkbox', checked: rule.is_active !== false });
  const conds = h('ul', { class: 'conditions' }, (rule.conditions || []).map(conditionRow));
  const status = h('div', { role: 'status' });
  const form = h('form', { class: 'card', novalidate: true, 'aria-labelledby': 'rule-h' },
    h('h2', { id: 'rule-h' }, rule.id ? `Edit ${rule.name}` : 'New routing rule'),
    field('Name', name), field('Connection', conn), field('Priority', prio, 'Lower goes first; empty: after the last rule.'),
    h('div', { class: 'field checkbox' }, active, h('label', { for: active.id }, 'Active')),
    h('h3', {}, 'All of these conditions'), conds,
    h('button', { class: 'button', type: 'button', onclick: () => conds.append(conditionRow()) }, 'Add condition'), status,
    h('div', { class: 'actions' }, h('button', { class: 'button button-primary', type: 'submit' }, 'Save rule'),
      rule.id ? h('button', { class: 'button button-link-delete', type: 'button', onclick: async () => { await api.del(`/pro/routing-rules/${rule.id}`); location.hash = '#/pro/rules'; } }, 'Delete') : null));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = { name: name.value, connection_id: Number(conn.value), is_active: active.checked, conditions: [...conds.children].map((r) => r.read()) };
    if (prio.value !== '') body.priority = Number(prio.value);
    try {
      await busy(e.submitter, rule.id ? api.put(`/pro/routing-rules/${rule.id}`, body) : api.post('/pro/routing-rules', body));
      if (location.hash === '#/pro/rules') await render(root, []); else location.hash = '#/pro/rules';
      flash('success', 'Rule saved.');
    } catch (err) {
      // conditions[i].field → the i-th row's control
      const rest = {};
      for (const [k, msg] of Object.entries(err.errors)) {
        const m = k.match(/^conditions\[(\d+)\]\.(\w+)$/);
        const ctl = m && conds.children[m[1]] && conds.children[m[1]].querySelector(`[name=${m[2]}]`);
        if (ctl) { ctl.setAttribute('aria-invalid', 'true'); ctl.title = msg; rest[k] = msg; } else rest[k] = msg;
      }
      replace(status, errorNotice(err, showErrors(form, rest)));
    }
  });
  return form;
}

function tester(rules) {
  const input = (k, label) => field(label, h('input', { id: `rt-${k}`, name: k }));
  const ruleSel = h('select', { id: 'rt-rule', name: 'rule_id' }, h('option', { value: '' }, 'Every rule'), rules.map((r) => h('option', { value: String(r.id) }, r.name)));
  const out = h('div', { role: 'status' });
  const form = h('form', { class: 'card', novalidate: true, 'aria-labelledby': 'rt-h' },
    h('h2', { id: 'rt-h' }, 'Test the rules with a sample message'),
    input('from', 'From'), input('to', 'To'), input('subject', 'Subject'), input('source', 'Source (plugin slug)'), field('Rule', ruleSel), out,
    h('div', { class: 'actions' }, h('button', { class: 'button button-primary', type: 'submit' }, 'Test')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = {};
    for (const k of ['from', 'to', 'subject', 'source']) if (form.elements[k].value) body[k] = form.elements[k].value;
    if (ruleSel.value) body.rule_id = Number(ruleSel.value);
    try {
      const r = await busy(e.submitter, api.post('/pro/routing-rules/test', body));
      replace(out, notice(r.matched ? 'success' : 'info', r.matched ? `Rule “${r.rule.name}” chooses connection #${r.connection_id}.` : 'No rule matches: the default connection sends it.'),
        table('Rules tried', ['Rule', 'Result', 'Conditions'], (r.rules || []).map((x) => [x.name || `#${x.id}`, badge(x.result),
          (x.conditions || []).map((c) => `${c.field} ${c.operator} ${c.value ?? ''}: ${c.holds ? 'holds' : 'no'}`).join('; ') + (x.reason ? ` (${x.reason})` : '')])));
    } catch (err) { replace(out, errorNotice(err, showErrors(form, err.errors))); }
  });
  return form;
}
