// app.js: boots the screens. It reads where it runs (standalone, or
// inside wp-admin with a nonce given in the URL fragment), shows the
// sign-in or access-denied screen when the API asks for it, and routes
// #/screen/param to the module of that screen.
import * as api from './api.js';
import { h, replace, notice, loadSiteFormat, setDateNames } from './ui.js';
import { refreshBanner } from './capture.js';
// The tabs the add-on modules registered (admin.RegisterScreens), as the
// service writes them: [{slug, title, module}].
import added from './nav.js';

const screens = [
  ['dashboard', 'Dashboard'],
  ['connections', 'Connections'],
  ['logs', 'Email logs'],
  ['alerts', 'Alerts'],
  ['settings', 'Settings'],
  ['tools', 'Tools'],
];
// Every tab: the built-in ones, then the modules' (slug, title, the
// module that renders it).
const tabs = [...screens.map(([slug, title]) => [slug, title, `${slug}.js`]),
  ...added.map(({ slug, title, module }) => [slug, title, module])];
const root = document.getElementById('app');

function readFragmentConfig() {
  // wp-admin's Mail page opens #embed=wp&nonce=...; keep the nonce in
  // memory only and take it out of the address bar.
  const p = new URLSearchParams(location.hash.slice(1));
  if (!p.has('nonce')) return;
  api.configure({ nonce: p.get('nonce'), base: p.get('api') || undefined, site: p.get('site') || undefined });
  if (p.get('embed') === 'wp') document.documentElement.classList.add('wp-embed');
  // The month and day names of wp-admin's language (the bridge's
  // mailsvc_bridge_date_names()); English when not given or unreadable.
  if (p.get('dates')) {
    try { setDateNames(JSON.parse(p.get('dates'))); } catch { /* English */ }
  }
  // The OAuth callback's flags, when wp-admin's Mail page passed them on.
  const flags = new URLSearchParams();
  for (const k of ['oauth', 'oauth_error', 'provider', 'connection_id']) if (p.get(k)) flags.set(k, p.get(k));
  // Appended, not replacing: served through the bridge with plain
  // permalinks, the page's own address is a ?rest_route= query.
  const search = flags.toString() ? (location.search ? location.search + '&' : '?') + flags : location.search;
  history.replaceState(null, '', location.pathname + search + '#/' + (p.get('screen') || 'dashboard'));
}

function signInScreen(message) {
  const user = h('input', { id: 'signin-user', name: 'user', autocomplete: 'username', required: true, value: api.user() });
  const pass = h('input', { id: 'signin-pass', name: 'pass', type: 'password', autocomplete: 'current-password', required: true });
  const status = h('div', { id: 'signin-status' }, message ? notice('error', message) : null);
  const form = h('form', { class: 'signin card', 'aria-labelledby': 'signin-title' },
    h('h1', { id: 'signin-title' }, 'Sign in to mailsvc'),
    h('p', {}, 'Use your WordPress user name and an application password. They are kept for this browser tab only.'),
    status,
    h('div', { class: 'field' }, h('label', { for: user.id }, 'User name'), user),
    h('div', { class: 'field' }, h('label', { for: pass.id }, 'Application password'), pass),
    h('button', { class: 'button button-primary', type: 'submit' }, 'Sign in'));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    api.signIn(user.value.trim(), pass.value);
    try {
      await api.get('/settings', null, { quiet: true });
      start(true);
    } catch (err) {
      if (err.status === 401) api.signOut();
      replace(status, notice('error', err.status === 401 ? 'That user name and application password were not accepted.'
        : err.code === 'rest_forbidden' ? 'This user may not manage mail.' : err.message));
      pass.focus();
    }
  });
  replace(root, h('main', { id: 'main', class: 'signin-wrap' }, form));
  (user.value ? pass : user).focus();
}

function deniedScreen() {
  replace(root, h('main', { id: 'main', class: 'denied' },
    h('h1', {}, 'Access denied'),
    notice('error', 'Sorry, you are not allowed to manage mail on this site.'),
    api.mode() === 'basic' ? h('button', { class: 'button', onclick: () => { api.signOut(); signInScreen(); } }, 'Sign in as someone else') : null));
}

function onAuthFailure(err) {
  if (err.code === 'rest_forbidden') return deniedScreen();
  if (api.mode() === 'cookie') {
    return replace(root, h('main', { id: 'main' }, notice('error', 'Your WordPress session has ended. Reload the page to sign in again.')));
  }
  api.signOut();
  signInScreen('Your session has ended; sign in again.');
}

function shell() {
  const links = tabs.map(([slug, title]) =>
    h('li', {}, h('a', { href: `#/${slug}`, dataset: { screen: slug } }, title)));
  replace(root,
    h('a', { class: 'skip-link', href: '#main' }, 'Skip to content'),
    h('header', { class: 'topbar' },
      h('span', { class: 'brand' }, 'mailsvc'),
      api.mode() === 'basic' ? h('span', { class: 'who' }, api.user(),
        h('button', { class: 'button-link', onclick: () => { api.signOut(); signInScreen(); } }, 'Sign out')) : null),
    h('nav', { class: 'nav-tab-wrapper', 'aria-label': 'Mail screens' }, h('ul', {}, links)),
    h('main', { id: 'main', tabindex: '-1' }, h('div', { id: 'capture-banner' }), h('div', { id: 'flash' }), h('div', { id: 'screen' })));
}

// routing counts the routes started: only the latest one may fill the
// screen, so a screen that loads slowly (the dashboard after sign-in)
// cannot replace the one the person opened meanwhile.
let routing = 0;

async function route() {
  const mine = ++routing;
  const [slug = 'dashboard', ...params] = location.hash.replace(/^#\/?/, '').split('?')[0].split('/').filter(Boolean);
  const [name, title, module] = tabs.find(([s]) => s === slug) || tabs[0];
  document.querySelectorAll('nav a').forEach((a) => {
    const on = a.dataset.screen === name;
    a.classList.toggle('nav-tab-active', on);
    if (on) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  });
  const el = document.getElementById('screen');
  if (!el) return;
  // A notice stays with the screen it was shown on.
  document.querySelectorAll('#flash .notice').forEach((n) => n.dataset.hash !== location.hash && n.remove());
  el.setAttribute('aria-busy', 'true');
  // The staging guard's banner, on every screen.
  refreshBanner(document.getElementById('capture-banner'));
  try {
    const mod = await import(`./${module}`);
    if (mine !== routing) return; // another address was opened meanwhile
    const view = h('div', { class: `screen screen-${name}` });
    replace(el, view);
    await mod.render(view, params.map(decodeURIComponent));
    if (mine !== routing) return;
    document.title = `${title} ‹ mailsvc`;
  } catch (err) {
    if (mine !== routing || err.status === 401 || err.code === 'rest_forbidden') return;
    replace(el, notice('error', err.message || String(err)));
  } finally {
    if (mine === routing) el.removeAttribute('aria-busy');
  }
}

// start shows the screens. Credentials not just checked by the sign-in
// form are checked first, so that a session that ended shows sign-in or
// access denied rather than the screens.
async function start(checked = false) {
  if (!checked) {
    try {
      await api.get('/settings', null, { quiet: true });
    } catch (err) {
      if (err.status === 401 || err.code === 'rest_forbidden') return onAuthFailure(err);
    }
  }
  // Times show in the site's own format and zone on every screen.
  await loadSiteFormat(api.get);
  shell();
  const oauth = new URLSearchParams(location.search);
  if (oauth.get('oauth')) {
    location.hash = '#/connections';
  }
  await route();
}

readFragmentConfig();
api.configure();
api.onAuth(onAuthFailure);
window.addEventListener('hashchange', () => route());
// A screen that released or adopted asks for the banner to be read again.
window.addEventListener('mailsvc:capture', () => refreshBanner(document.getElementById('capture-banner')));
// The banner released or adopted: the screens that count or list held
// messages (the dashboard, the email logs) are read again; others keep
// what the person was doing.
window.addEventListener('mailsvc:captured', () => {
  const slug = location.hash.replace(/^#\/?/, '').split('?')[0].split('/')[0] || 'dashboard';
  if (slug === 'dashboard' || slug === 'logs') route();
});
if (api.signedIn()) start(); else signInScreen();
