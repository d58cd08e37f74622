// form.js: a settings form generated from a driver's schema as
// GET /transports/{driver} serves it: one labelled control per field,
// required and required_when shown and enforced by the API, secrets as
// password inputs that keep the masked value unless changed, pinned and
// constant_only keys read-only, and presets that fill the form.
import { h, field, id } from './ui.js';

/** MASK is how the API shows a stored secret. */
export const MASK = '********';

const isSecret = (f) => f.sensitive || f.type === 'password';

// An encryption choice in words, with the port it usually goes with.
const ENCRYPTION = { tls: 'TLS (STARTTLS, port 587)', ssl: 'SSL (port 465)', none: 'None' };
const PORT_OF = { tls: 587, ssl: 465, none: 25 };
const isEncryption = (f) => /encryption$/.test(f.key);

// optionLabel answers the words a select's option is shown with.
const optionLabel = (f, o) => (isEncryption(f) && ENCRYPTION[o]) || o;

function control(f, value, pinned) {
  const name = f.key;
  const common = { name, id: id('s-' + name), disabled: pinned };
  const v = value === undefined || value === null ? (f.default ?? '') : value;
  switch (f.type) {
    case 'boolean':
      return h('input', { ...common, type: 'checkbox', checked: v === true || v === 'true' });
    case 'select':
      return h('select', { ...common, value: v }, (f.options || []).map((o) => h('option', { value: o }, optionLabel(f, o))));
    case 'integer':
      return h('input', { ...common, type: 'number', inputmode: 'numeric', min: f.min, max: f.max, step: 1, value: v });
    case 'text':
      return h('textarea', { ...common, rows: 4, value: v });
    default: {
      // Only a password is masked while typed: a user name (sensitive,
      // so stored encrypted and masked in answers) is typed in clear.
      const type = f.type === 'password' ? 'password' : f.type === 'email' ? 'email' : f.type === 'url' ? 'url' : 'text';
      const attrs = { ...common, type, value: v, autocomplete: type === 'password' ? 'new-password' : 'off' };
      if (type === 'email' || type === 'url') attrs.type = 'text'; // the API validates; the browser must not block submit
      return h('input', attrs);
    }
  }
}

/** requiredNow reports whether f is required given the form's values. */
export function requiredNow(f, values) {
  if (f.required) return true;
  if (!f.required_when) return false;
  return Object.entries(f.required_when).every(([k, want]) => String(values[k] ?? '') === String(want));
}

/**
 * schemaForm builds the settings part of a connection form.
 * transport: the driver's schema; settings: stored values (masked);
 * pinned: keys set by a constant. Answers {el, read, fill}.
 */
export function schemaForm(transport, settings = {}, pinned = [], { omit = [] } = {}) {
  const rows = new Map();
  const el = h('fieldset', { class: 'schema' }, h('legend', {}, `${transport.name} settings`));
  // The fields marked advanced, folded away until opened.
  const advanced = h('details', { class: 'advanced' }, h('summary', {}, 'Advanced'));
  if (transport.presets && transport.presets.length) {
    const pick = h('select', { id: id('preset') },
      h('option', { value: '' }, 'Choose a preset…'),
      transport.presets.map((p) => h('option', { value: p.slug }, p.name)));
    pick.addEventListener('change', () => {
      const p = transport.presets.find((x) => x.slug === pick.value);
      if (p) fill(p.settings);
    });
    el.append(field('Preset', pick, 'Fills the fields below with a known provider’s settings.'));
  }
  for (const f of transport.fields) {
    // A field the caller asks elsewhere (the wizard's site-wide From)
    // is left out unless the provider needs it.
    if (omit.includes(f.key) && !f.required && !f.required_when) continue;
    const isPinned = pinned.includes(f.key);
    // A constant_only key is read-only too: only its constant sets it.
    const ctl = control(f, settings[f.key], isPinned || Boolean(f.constant_only));
    const help = [f.help, isPinned ? `Set by the constant ${f.constant}.` : '',
      isSecret(f) && settings[f.key] === MASK ? 'Stored; leave as is to keep it.' : ''].filter(Boolean).join(' ');
    const row = field(f.label || f.key, ctl, help || null);
    rows.set(f.key, { f, ctl, row });
    (f.advanced ? advanced : el).append(row);
    ctl.addEventListener('change', refresh);
    if (isEncryption(f)) ctl.addEventListener('change', () => followPort(f, ctl));
  }
  if (advanced.children.length > 1) el.append(advanced);
  // A connection that sets an advanced field shows them open.
  advanced.open = transport.fields.some((f) => f.advanced && settings[f.key] !== undefined && settings[f.key] !== null
    && settings[f.key] !== '' && String(settings[f.key]) !== String(f.default ?? ''));

  /** followPort moves the port with the encryption while the port is
   * still one of the usual ones (or empty). */
  function followPort(f, ctl) {
    const port = rows.get(f.key.replace(/encryption$/, 'port'));
    if (!port || port.ctl.disabled) return;
    const usual = port.ctl.value === '' || Object.values(PORT_OF).includes(Number(port.ctl.value));
    if (usual && PORT_OF[ctl.value]) port.ctl.value = String(PORT_OF[ctl.value]);
  }

  function values() {
    const out = {};
    for (const [k, { f, ctl }] of rows) {
      if (ctl.disabled) continue;
      if (f.type === 'boolean') out[k] = ctl.checked;
      else if (f.type === 'integer') out[k] = ctl.value === '' ? null : Number(ctl.value);
      else out[k] = ctl.value;
    }
    return out;
  }

  /** refresh marks the fields required now (required_when follows the values). */
  function refresh() {
    const v = values();
    for (const { f, ctl, row } of rows.values()) {
      const req = requiredNow(f, v);
      ctl.setAttribute('aria-required', String(req));
      row.classList.toggle('required', req);
    }
  }

  function fill(s) {
    for (const [k, v] of Object.entries(s || {})) {
      const r = rows.get(k);
      if (!r || r.ctl.disabled) continue;
      if (r.f.type === 'boolean') r.ctl.checked = v === true;
      else r.ctl.value = v ?? '';
    }
    refresh();
  }

  /** read answers the settings to send. An empty value is left out on
   * create and sent as null on edit (which removes the stored key); a
   * secret still showing the mask is sent back masked, which keeps it. */
  function read(editing = false) {
    const out = values();
    for (const [k, v] of Object.entries(out)) {
      if (v === '' || v === null) {
        if (editing && settings[k] !== undefined && settings[k] !== '') out[k] = null;
        else delete out[k];
      }
    }
    return out;
  }

  refresh();
  return { el, read, fill };
}
