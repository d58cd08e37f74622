// tools.js: the doctor's checks, debug transcripts, the site's plugins,
// and the import from other mail plugins, chunk by chunk with its progress.
import * as api from './api.js';
import { h, replace, heading, table, badge, when, notice, errorNotice, flash, busy } from './ui.js';

/** render shows the tools. */
export async function render(root) {
  const debug = h('section', { class: 'card', 'aria-labelledby': 'dbg-h' });
  const plugins = h('section', { class: 'card', 'aria-labelledby': 'plg-h' });
  const migration = h('section', { class: 'card', 'aria-labelledby': 'mig-h' });
  const doctor = h('section', { class: 'card', 'aria-labelledby': 'doc-h' });
  replace(root, heading('Tools'), doctor, migration, debug, plugins);
  await Promise.all([showDoctor(doctor), showDebug(debug), showPlugins(plugins), showMigration(migration)]);
}

async function showDoctor(box) {
  const title = h('h2', { id: 'doc-h' }, 'Installation check');
  let report;
  try { report = await api.get('/tools/doctor'); } catch (err) { return replace(box, title, errorNotice(err)); }
  const bad = report.checks.filter((c) => c.verdict !== 'ok').length;
  replace(box, title,
    report.healthy ? notice(bad ? 'warning' : 'success', bad ? `Mail and the screens work; ${bad} warnings.` : 'Everything checked is fine.')
      : notice('error', 'A check that mail or the screens depend on failed: see its fix below.'),
    table('Installation checks', ['Check', 'Verdict', 'Found', 'Fix'], report.checks.map((c) => [
      c.title, badge(c.verdict), c.message, c.fix || '—'])),
    h('button', { class: 'button', type: 'button', onclick: () => showDoctor(box) }, 'Check again'));
}

async function showDebug(box) {
  let page;
  try { page = await api.list('/tools/debug-logs', { per_page: 20 }); } catch (err) { return replace(box, h('h2', { id: 'dbg-h' }, 'Debug transcripts'), errorNotice(err)); }
  replace(box, h('h2', { id: 'dbg-h' }, 'Debug transcripts'),
    h('p', {}, `${page.total} SMTP transcripts (credential checks, and sends while debug mail is on). Passwords are masked.`),
    h('button', { class: 'button', type: 'button', disabled: !page.total, onclick: async (e) => {
      if (!confirm('Delete every transcript?')) return;
      const r = await busy(e.target, api.del('/tools/debug-logs')); flash('success', `${r.deleted} deleted.`); showDebug(box);
    } }, 'Delete all'),
    page.items.map((x) => h('details', {}, h('summary', {}, `${when(x.created_at)} · connection #${x.connection_id} · ${x.size} bytes`),
      h('pre', { tabindex: '0' }, x.transcript))));
}

async function showPlugins(box) {
  let list = [];
  try { list = await api.get('/tools/plugins'); } catch (err) { return replace(box, h('h2', { id: 'plg-h' }, 'Active plugins'), errorNotice(err)); }
  replace(box, h('h2', { id: 'plg-h' }, 'Active plugins'),
    table('Active plugins', ['Plugin', 'Version', 'File'], list.map((p) => [p.name || p.slug, p.version || '—', p.file])));
}

async function showMigration(box) {
  const title = h('h2', { id: 'mig-h' }, 'Import from another mail plugin');
  let scan;
  try { scan = await api.get('/tools/migration/scan'); } catch (err) {
    return replace(box, title, err.code === 'rest_no_route' ? h('p', {}, 'Import needs the WordPress site (MAILSVC_WP_CONFIG).') : errorNotice(err));
  }
  const found = scan.sources || [];
  if (!found.length) return replace(box, title, h('p', {}, 'No other mail plugin’s settings or logs were found on this site.'));
  const out = h('div', { id: 'mig-out', role: 'status' });
  replace(box, title, table('Sources found', ['Plugin', 'Active', 'Connections', 'Log rows', ''], found.map((s) => [
    s.name, s.active ? 'yes' : 'no', String(s.connections ?? '—'), `${s.log_rows ?? '—'}${s.log_rows_estimated ? ' (about)' : ''}`,
    h('span', { class: 'actions' },
      h('button', { class: 'button', type: 'button', onclick: (e) => run(e.target, s, true, out) }, `Preview ${s.name}`),
      h('button', { class: 'button button-primary', type: 'button', onclick: (e) => run(e.target, s, false, out) }, `Import ${s.name}`))])), out);
}

async function run(btn, src, dryRun, out) {
  const bar = h('progress', { class: 'progress', max: 100, value: 0, 'aria-label': `Import of ${src.name}` });
  const line = h('p');
  replace(out, bar, line);
  btn.disabled = true;
  try {
    let res = await api.post('/tools/migration/import', { source: src.source, dry_run: dryRun, import_logs: !dryRun && !!src.logs_available });
    const report = res;
    while (!dryRun && res.logs && !res.logs.done && res.logs.cursor) {
      const l = res.logs;
      bar.max = Math.max(1, l.total || 1);
      bar.value = l.imported_total || 0;
      line.textContent = `${l.imported_total || 0} of ${l.total} log rows imported…`;
      res = await api.post('/tools/migration/import', { source: src.source, import_connections: false, import_logs: true, cursor: l.cursor });
    }
    bar.value = bar.max;
    replace(out, notice(report.errors && report.errors.length ? 'error' : 'success',
      dryRun ? 'Preview: nothing was written.' : `Imported. ${res.logs ? res.logs.imported_total || 0 : 0} log rows.`),
      table('Connections', ['Name', 'Status', 'Driver', 'Missing'], (report.connections || []).map((c) => [c.name,
        badge(c.status), c.conversion ? `${c.conversion.from} → ${c.conversion.to}` : '—', (c.missing || []).join(', ') || '—'])),
      (report.suggestions || []).length ? h('ul', {}, report.suggestions.map((s) => h('li', {}, s))) : null);
  } catch (err) { replace(out, errorNotice(err)); } finally { btn.disabled = false; }
}
