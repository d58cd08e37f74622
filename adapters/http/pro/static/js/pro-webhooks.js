// pro-webhooks.js: the URL to paste into each provider's webhook settings,
// and which of the site's connections hold the secret that verifies it.
import * as api from './api.js';
import { h, replace, table, badge } from './ui.js';

const PROVIDERS = [
  ['sendgrid', 'SendGrid', 'Settings → Mail Settings → Event Webhook; turn on the signed webhook and copy its verification key into webhook_public_key.', 'webhook_public_key'],
  ['mailgun', 'Mailgun', 'Sending → Webhooks; copy the HTTP webhook signing key into webhook_signing_key.', 'webhook_signing_key'],
  ['postmark', 'Postmark', 'Server → Webhooks; use https://user:password@… with the webhook_username and webhook_password of the connection.', 'webhook_password'],
  ['ses', 'Amazon SES', 'An SNS topic with an HTTPS subscription to this URL; list the topic ARN in webhook_topic_arns.', 'webhook_topic_arns'],
  ['brevo', 'Brevo', 'Transactional → Settings → Webhook; choose Bearer token authentication and enter the connection’s webhook_token.', 'webhook_token'],
  ['sparkpost', 'SparkPost', 'Configuration → Webhooks; choose Basic Auth with the webhook_username and webhook_password of the connection.', 'webhook_password'],
  ['mailjet', 'Mailjet', 'Account settings → Event tracking; use https://user:password@… with the webhook_username and webhook_password of the connection.', 'webhook_password'],
  ['resend', 'Resend', 'Webhooks → Add endpoint; copy the endpoint’s signing secret (whsec_…) into webhook_secret.', 'webhook_secret'],
  ['mailersend', 'MailerSend', 'Domains → Webhooks; copy the webhook’s signing secret into webhook_secret.', 'webhook_secret'],
  ['mandrill', 'Mailchimp Transactional (Mandrill)', 'Settings → Webhooks; add this URL, then copy the webhook key into webhook_key and the URL, exactly as entered, into webhook_url.', 'webhook_key'],
  ['elasticemail', 'Elastic Email', 'Settings → Notifications; the notification URL is this URL with ?token= and the connection’s webhook_token (a random value you choose).', 'webhook_token', '?token=WEBHOOK_TOKEN'],
];

/** render lists each provider's webhook URL. */
export async function render(root) {
  const conns = (await api.list('/connections', { per_page: 100 })).items;
  replace(root, h('p', {}, 'Point each provider’s event webhook at its URL below; bounces and complaints then mark the log and fill the suppression list.'),
    table('Webhook URLs', ['Provider', 'URL to paste', 'Where', 'Secret set'], PROVIDERS.map(([slug, name, where, secret, query = '']) => {
      const url = `${api.base()}/pro/webhooks/${slug}${query}`;
      const input = h('input', { type: 'text', readonly: true, value: url, 'aria-label': `${name} webhook URL`, class: 'code', onfocus: (e) => e.target.select() });
      const ready = conns.filter((c) => c.driver === slug && c.settings && c.settings[secret]);
      return [name, h('span', {}, input, h('button', { class: 'button', type: 'button', onclick: () => navigator.clipboard && navigator.clipboard.writeText(url) }, `Copy ${name} URL`)),
        where, ready.length ? badge('success') : badge('pending')];
    })));
}
