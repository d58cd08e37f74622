// pro-groups.js: sender groups: the members of each group in failover
// order, reordered by drag and drop or by the Up/Down buttons, with the
// strategy, weights and daily caps.
import * as api from './api.js';
import { h, replace, field, badge, showErrors, errorNotice, flash, busy } from './ui.js';

/** render lists every sender group with its editor. */
export async function render(root) {
  const res = await api.get('/pro/sender-groups');
  const groups = Array.isArray(res) ? res : res.groups || [];
  replace(root, groups.length ? groups.map(editor)
    : h('p', { class: 'card' }, 'A sender group appears when more than one active connection sends as the same From address.'));
}

function editor(g) {
  const list = h('ol', { class: 'sortable', 'aria-label': `Members of ${g.sender}, in order` });
  const strategy = h('select', { id: `grp-${g.sender}-strategy`, name: 'strategy' }, ['failover', 'balance', 'overflow'].map((s) => h('option', { value: s }, s)));
  strategy.value = g.strategy || 'failover';
  const status = h('div', { role: 'status' });
  const item = (m) => {
    const li = h('li', { draggable: 'true', dataset: { id: m.connection_id } },
      h('span', { class: 'grip', 'aria-hidden': 'true' }, '⋮⋮'), h('strong', {}, m.name), ` (${m.provider}) `, badge(m.health_status),
      h('label', { for: `w-${g.sender}-${m.connection_id}` }, 'Weight'),
      h('input', { id: `w-${g.sender}-${m.connection_id}`, name: 'weight', type: 'number', class: 'small', min: 1, max: 100, value: m.weight || 1 }),
      h('label', { for: `c-${g.sender}-${m.connection_id}` }, 'Daily cap'),
      h('input', { id: `c-${g.sender}-${m.connection_id}`, name: 'daily_cap', type: 'number', class: 'small', min: 0, value: m.daily_cap || 0 }),
      h('span', { class: 'muted' }, `${m.sent_today || 0} today`),
      h('button', { class: 'button', type: 'button', 'aria-label': `Move ${m.name} up`, onclick: () => move(li, -1) }, '↑'),
      h('button', { class: 'button', type: 'button', 'aria-label': `Move ${m.name} down`, onclick: () => move(li, 1) }, '↓'));
    li.addEventListener('dragstart', (e) => { li.classList.add('dragging'); e.dataTransfer.effectAllowed = 'move'; });
    li.addEventListener('dragend', () => li.classList.remove('dragging'));
    return li;
  };
  const move = (li, dir) => {
    const to = dir < 0 ? li.previousElementSibling : li.nextElementSibling;
    if (!to) return;
    dir < 0 ? list.insertBefore(li, to) : list.insertBefore(to, li);
    li.querySelector(`[aria-label^="Move"][aria-label$="${dir < 0 ? 'up' : 'down'}"]`).focus();
  };
  list.addEventListener('dragover', (e) => {
    e.preventDefault();
    const dragging = list.querySelector('.dragging');
    const after = [...list.children].find((c) => c !== dragging && e.clientY < c.getBoundingClientRect().top + c.offsetHeight / 2);
    list.insertBefore(dragging, after || null);
  });
  (g.members || []).forEach((m) => list.append(item(m)));
  const form = h('form', { class: 'card', novalidate: true, 'aria-label': `Sender group ${g.sender}` },
    h('h2', {}, g.sender, g.configured ? '' : h('span', { class: 'muted' }, ' (not saved yet)')),
    field('Strategy', strategy), list, status,
    h('div', { class: 'actions' }, h('button', { class: 'button button-primary', type: 'submit' }, 'Save group')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const members = [...list.children].map((li) => ({ connection_id: Number(li.dataset.id),
      weight: Number(li.querySelector('[name=weight]').value), daily_cap: Number(li.querySelector('[name=daily_cap]').value) }));
    try { await busy(e.submitter, api.put('/pro/sender-groups', { sender: g.sender, strategy: strategy.value, members })); flash('success', `Group ${g.sender} saved.`); } catch (err) {
      replace(status, errorNotice(err, showErrors(form, err.errors)));
    }
  });
  return form;
}
