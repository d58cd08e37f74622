// capture.js: the staging guard's banner, shown above every screen while
// mail is held (a copy of the live site, a staging environment,
// simulation mode), with its two ways out: "This is the live site now"
// (adopt; releases nothing) and releasing the held messages.
import * as api from './api.js';
import { h, replace, flash, busy } from './ui.js';

/** refreshBanner reads GET /capture and fills el: the warning while mail
 * is held; after that, a note while held messages wait for a release;
 * nothing otherwise. */
export async function refreshBanner(el) {
  if (!el) return;
  let st;
  try {
    st = await api.get('/capture', { per_page: 1 }, { quiet: true });
  } catch {
    return replace(el); // an older service, or no access: no banner
  }
  const n = (st && st.captured) || 0;
  if (!st || (st.mode !== 'capture' && n === 0)) return replace(el);
  const again = () => refreshBanner(el);
  const actions = [];
  if (st.reason === 'copy') {
    actions.push(h('button', { class: 'button', type: 'button', id: 'capture-adopt', onclick: async (e) => {
      if (!confirm('Record this site as the live site? Mail will be sent from here. Held messages stay held until you release them.')) return;
      try {
        await busy(e.target, api.post('/capture/adopt'));
        flash('success', 'This is the live site now. Held messages stay held until you release them.');
      } catch (err) { flash('error', err.message); }
      again();
      window.dispatchEvent(new Event('mailsvc:captured'));
    } }, 'This is the live site now'));
  }
  if (n > 0) {
    actions.push(h('button', { class: 'button', type: 'button', id: 'capture-release-all', onclick: async (e) => {
      if (!confirm(`Send all ${n} held message(s) now?`)) return;
      try {
        const res = await busy(e.target, api.post('/capture/release', { all: true }));
        flash('success', `${res.released} message(s) released: they are sent once each.`);
      } catch (err) { flash('error', err.message); }
      again();
      window.dispatchEvent(new Event('mailsvc:captured'));
    } }, 'Release all held messages'));
    actions.push(h('a', { class: 'button-link', href: '#/logs?status=captured', id: 'capture-choose' }, 'Choose messages to release'));
  }
  const holding = st.mode === 'capture';
  replace(el, h('div', { class: `notice ${holding ? 'notice-warning' : 'notice-info'} capture-banner`, role: 'status' },
    h('p', {}, h('strong', {}, holding ? st.message : 'Mail is sent again from this site. Messages held before are still held.')),
    h('p', { class: 'muted' }, n === 1 ? '1 message is held.' : `${n} messages are held.`,
      st.reason === 'environment' ? ' Set MAILSVC_ENVIRONMENT=production if this is the live site.' : '',
      st.reason === 'simulation' ? ' Turn simulation off in the settings to send mail.' : ''),
    h('div', { class: 'actions' }, actions)));
}
