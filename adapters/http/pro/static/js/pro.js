// pro.js: the Pro screens, one tab each, each in its own module
// (pro-<tab>.js) loaded when opened.
import { h, replace, heading } from './ui.js';

const TABS = [
  ['license', 'Licence'], ['settings', 'Pro settings'], ['groups', 'Sender groups'], ['rules', 'Routing rules'],
  ['analytics', 'Analytics'], ['domain', 'Domain check'], ['transfer', 'Export / import'], ['ses', 'SES identities'],
  ['webhooks', 'Webhooks'], ['suppressions', 'Suppression list'],
];

/** render shows the Pro tab named by #/pro/{tab}. */
export async function render(root, [tab = 'license', ...rest]) {
  if (!TABS.some(([t]) => t === tab)) tab = 'license';
  const body = h('div', { class: `pro-${tab}` });
  replace(root, heading('Pro'),
    h('nav', { class: 'subsubsub', 'aria-label': 'Pro screens' }, h('ul', {}, TABS.map(([t, title]) =>
      h('li', {}, h('a', { href: `#/pro/${t}`, 'aria-current': t === tab ? 'page' : null, class: t === tab ? 'current' : null }, title))))),
    body);
  const mod = await import(`./pro-${tab}.js`);
  await mod.render(body, rest);
}
