// pro-settings.js: the Pro settings (retries, plugin exclusions, log sources).
import * as api from './api.js';
import { replace } from './ui.js';
import { settingsForm } from './settings.js';

const SLUGS = 'One plugin or theme slug per line (theme:<slug> for a theme).';

/** render shows the Pro settings; the slug lists are edited one per line. */
export async function render(root) {
  const values = await api.get('/pro/settings');
  replace(root, settingsForm(values, (patch) => api.put('/pro/settings', patch), new Set(),
    { excluded_plugins: SLUGS, disabled_log_sources: SLUGS }));
}
