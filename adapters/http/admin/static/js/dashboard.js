// dashboard.js: totals and success rate, the volume chart, recent
// activity, queue depth, connection health, and the setup wizard
// (wizard.js) on first use.
import * as api from './api.js';
import { h, replace, heading, table, badge, when } from './ui.js';
import { volumeChart } from './chart.js';
import { onboarding } from './wizard.js';

const pct = (v) => (v === null || v === undefined ? '—' : `${v}%`);

function stat(label, value) {
  return h('div', { class: 'stat card' }, h('span', { class: 'stat-value' }, value), h('span', { class: 'stat-label' }, label));
}

/** render draws the dashboard into root. */
export async function render(root) {
  const range = h('select', { id: 'dash-range', value: '7d' },
    [['today', 'Today'], ['7d', 'Last 7 days'], ['30d', 'Last 30 days'], ['90d', 'Last 90 days'], ['365d', 'Last year']]
      .map(([v, t]) => h('option', { value: v }, t)));
  const bucket = h('select', { id: 'dash-bucket', value: 'day' }, h('option', { value: 'day' }, 'By day'), h('option', { value: 'hour' }, 'By hour'));
  range.value = '7d';
  const wizard = h('div', { id: 'onboarding' });
  const body = h('div', { class: 'dash-body' });
  replace(root, heading('Dashboard'), wizard,
    h('div', { class: 'toolbar' }, h('label', { for: range.id }, 'Range'), range, h('label', { for: bucket.id }, 'Chart'), bucket),
    body);
  const load = () => draw(body, range.value, bucket.value);
  range.addEventListener('change', () => { if (range.value !== 'today' && range.value !== '7d' && bucket.value === 'hour') bucket.value = 'day'; load(); });
  bucket.addEventListener('change', load);
  await Promise.all([load(), onboarding(wizard, load)]);
}

async function draw(body, range, bucket) {
  const [stats, chart, activity, queue, conns] = await Promise.all([
    api.get('/dashboard/stats', { range }),
    api.get('/dashboard/chart', { range, bucket }),
    api.get('/dashboard/activity', { limit: 8 }),
    api.get('/logs/queue/stats'),
    api.list('/connections', { per_page: 100 }),
  ]);
  const t = stats.totals || {};
  const ec = stats.email_controls;
  replace(body,
    attentionCard(stats.attention),
    h('section', { 'aria-label': 'Totals', class: 'stats' },
      stat('Delivered', t.delivered ?? 0), stat('Failed', t.failed ?? 0), stat('Success rate', pct(t.success_rate)),
      stat('Queued', queue.queued), stat('Retrying', h('span', { id: 'dash-retrying' }, String(t.retrying ?? 0))), stat('Sending', queue.sending),
      t.captured ? stat('Held (captured)', t.captured) : null,
      ec ? stat('Core emails stopped', h('a', { href: '#/settings', id: 'dash-stopped' }, String(ec.suppressed))) : null),
    ec && ec.suppressed ? await stoppedCard(ec) : null,
    h('section', { class: 'card', 'aria-labelledby': 'vol-h' },
      h('h2', { id: 'vol-h' }, 'Volume by status'),
      h('p', { class: 'legend' }, h('span', { class: 'key key-delivered' }), 'Delivered ', h('span', { class: 'key key-failed' }), 'Failed'),
      volumeChart(chart.points || [], `Messages per ${bucket}`)),
    h('div', { class: 'columns' },
      h('section', { class: 'card', 'aria-labelledby': 'act-h' },
        h('h2', { id: 'act-h' }, 'Recent activity'),
        table('Recent activity', ['Status', 'Subject', 'To', 'When'], (activity.items || []).map((a) => [
          badge(a.status === 'queued' && a.attempts > 0 ? 'retrying' : a.status), h('a', { href: `#/logs/${a.id}` }, a.subject || '(no subject)'),
          (a.recipients || []).join(', '),
          a.status === 'queued' ? h('span', {}, when(a.time), h('br'), `Next attempt: ${when(a.next_attempt_at)}`) : when(a.time)]))),
      h('section', { class: 'card', 'aria-labelledby': 'health-h' },
        h('h2', { id: 'health-h' }, 'Connection health'),
        table('Connection health', ['Connection', 'Health', 'Last sent', 'Checked', 'Success rate'], conns.items.map((c) => {
          const s = (stats.connections || []).find((x) => x.id === c.id) || {};
          const health = c.oauth_status === 'needs_authorization' ? 'needs_authorization' : (s.health || c.health_status);
          return [h('a', { href: `#/connections/${c.id}` }, c.name),
            h('span', { class: 'conn-health', 'data-connection': String(c.id) }, badge(health),
              health === 'failing' && s.health_since ? h('span', {}, ` since ${when(s.health_since)}`) : null,
              health !== 'healthy' && s.last_error ? h('div', { class: 'description' }, s.last_error) : null),
            when(s.last_sent_at), when(s.last_checked_at || c.last_checked_at), pct(s.success_rate)];
        })))));
}

/** attentionCard says what needs the owner now: failing connections
 * since when and with what error, mail waiting for a retry and its next
 * attempt, failed and held mail. Nothing when all is well. */
function attentionCard(a) {
  if (!a) return null;
  const items = [];
  for (const c of a.failing_connections || []) {
    items.push(h('li', { class: 'attention-failing' }, h('strong', {}, `${c.name} is failing`),
      c.since ? ` since ${when(c.since)}` : '', c.last_error ? `: ${c.last_error}` : ''));
  }
  if (a.retrying) {
    items.push(h('li', { class: 'attention-retrying' },
      `${a.retrying === 1 ? '1 message is' : `${a.retrying} messages are`} waiting to be retried. Next attempt: ${when(a.next_attempt_at)}.`));
  }
  if (a.failed_24h) {
    items.push(h('li', {}, `${a.failed_24h === 1 ? '1 message' : `${a.failed_24h} messages`} failed in the last 24 hours. `,
      h('a', { href: '#/logs?status=failed' }, 'See the failed messages')));
  }
  if (a.captured) items.push(h('li', {}, `${a.captured === 1 ? '1 message is' : `${a.captured} messages are`} held by the staging guard, not sent.`));
  if (a.flood_held) {
    items.push(h('li', { class: 'attention-flood' }, `${a.flood_held === 1 ? '1 message is' : `${a.flood_held} messages are`} held by the flood guard, not sent. `,
      h('a', { href: '#/logs?status=held' }, 'Release or discard')));
  }
  if (!items.length) return null;
  return h('section', { class: 'card notice notice-error', id: 'dash-attention', 'aria-labelledby': 'attention-h' },
    h('h2', { id: 'attention-h' }, 'Needs attention'), h('ul', {}, items));
}

/** stoppedCard lists the kinds of WordPress core email the email controls
 * stopped over the range, with their labels from the Settings screen's
 * route. */
async function stoppedCard(ec) {
  const { controls } = await api.get('/settings/email-controls');
  const rows = controls.filter((c) => ec.by_kind[c.kind]).map((c) => [c.label, String(ec.by_kind[c.kind]), c.enabled ? 'sent again' : 'stopped']);
  return h('section', { class: 'card', 'aria-labelledby': 'stopped-h' },
    h('h2', { id: 'stopped-h' }, 'WordPress core emails stopped'),
    h('p', {}, 'Switched off on the ', h('a', { href: '#/settings' }, 'Settings'), ' screen; counted here, never lost silently.'),
    table('WordPress core emails stopped', ['Email', 'Stopped', 'Now'], rows));
}
