// pro-transfer.js: export the configuration (no secrets) as a file, and
// import one: preview first, then apply with a resolution per conflict.
import * as api from './api.js';
import { h, replace, field, table, notice, errorNotice, busy } from './ui.js';

/** render shows export and import. */
export async function render(root) {
  const out = h('div', { role: 'status' });
  const file = h('input', { id: 'imp-file', name: 'file', type: 'file', accept: 'application/json,.json' });
  let data = null;
  const preview = h('div');
  const doExport = async (e) => {
    try {
      const snap = await busy(e.target, api.post('/pro/tools/export', {}));
      const a = h('a', { href: URL.createObjectURL(new Blob([JSON.stringify(snap, null, 2)], { type: 'application/json' })), download: 'mailsvc-export.json' });
      a.click();
      replace(out, notice('success', 'Exported. Secrets are left out: enter them again after an import.'));
    } catch (err) { replace(out, errorNotice(err)); }
  };
  file.addEventListener('change', async () => {
    try {
      data = JSON.parse(await file.files[0].text());
      const p = await api.post('/pro/tools/import/preview', { data });
      const items = p.items || p.conflicts || [];
      replace(preview, table('What the import changes', ['Item', 'Change', 'Resolution'], items.map((it) => {
        const key = it.key || `${it.kind}:${it.id}`;
        const sel = h('select', { name: key, 'aria-label': `Resolution for ${key}` }, ['replace', 'keep', 'add'].map((r) => h('option', { value: r }, r)));
        return [key, it.action || it.change || '', sel];
      })), h('button', { class: 'button button-primary', type: 'button', onclick: apply }, 'Import'));
    } catch (err) { replace(out, errorNotice(err.message ? err : new Error('That file is not a mailsvc export.'))); }
  });
  async function apply(e) {
    const resolutions = {};
    preview.querySelectorAll('select').forEach((s) => (resolutions[s.name] = s.value));
    try {
      await busy(e.target, api.post('/pro/tools/import', { data, resolutions }));
      replace(out, notice('success', 'Imported.'));
    } catch (err) { replace(out, errorNotice(err)); }
  }
  replace(root,
    h('section', { class: 'card' }, h('h2', {}, 'Export'), h('p', {}, 'Connections, alert channels, settings, sender groups and routing rules, without secrets.'),
      h('button', { class: 'button button-primary', type: 'button', onclick: doExport }, 'Download the export')),
    h('section', { class: 'card' }, h('h2', {}, 'Import'), field('Export file', file), preview), out);
}
