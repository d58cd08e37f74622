package core

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// ConstantType is the type a constant's value must have.
type ConstantType string

// Constant types.
const (
	ConstString ConstantType = "string"
	ConstBool   ConstantType = "boolean"
	ConstInt    ConstantType = "integer"
)

// ConstantSource says where a constant's effective value came from.
type ConstantSource string

// Constant sources, highest precedence first.
const (
	SourceWPConfig    ConstantSource = "wp-config"
	SourceEnvironment ConstantSource = "environment"
	SourceDatabase    ConstantSource = "database"
	SourceDefault     ConstantSource = "default"
)

// Constant groups of the catalog, in the order of the spec and then the
// daemon's own settings.
const (
	GroupCredentials = "credentials"
	GroupSES         = "ses"
	GroupOAuth       = "oauth"
	GroupBehavior    = "behavior"
	GroupDebug       = "debug"
	GroupService     = "service"
	GroupDaemon      = "daemon"
	GroupHost        = "host"
)

// Secret visibilities of the debug log (MAIL_SVC_DEBUG_SECRET_VISIBILITY).
const (
	VisibilityMask = "mask" // sensitive values are shown as Mask
	VisibilityShow = "show" // exact values; never for a live site
	VisibilityFull = "full" // sensitive values are replaced by [REDACTED]
)

// ConstantDef describes one constant the service reads or reserves.
type ConstantDef struct {
	Name    string
	Type    ConstantType
	Default string // the effective value when the constant is not defined
	// Sensitive values are masked in every output.
	Sensitive   bool
	Group       string
	Description string
	// AliasOf names the canonical constant when this one is a legacy alias;
	// the canonical constant wins when both are defined.
	AliasOf string
	// ServiceSet constants are defined by the service itself; a site owner
	// defining one gets a warning.
	ServiceSet bool
	// Allowed, when set, lists the only accepted values (compared
	// case-insensitively).
	Allowed []string
	// Min and Max bound an integer constant when set.
	Min, Max *int64
}

// ConstantCatalog is every constant the spec names, plus the host constants
// it depends on and the daemon's own settings. The credential pattern
// MAILSVC_{DRIVER}_{KEY} is open-ended: its spec examples are listed here,
// and Constants resolves any driver's key with Pins.
var ConstantCatalog = []ConstantDef{
	// Connection credentials (spec examples of MAILSVC_{DRIVER}_{KEY}) and legacy aliases.
	{Name: "MAILSVC_SENDGRID_API_KEY", Type: ConstString, Sensitive: true, Group: GroupCredentials, Description: "Pins the api_key of sendgrid connections."},
	{Name: "MAILSVC_MAILGUN_API_KEY", Type: ConstString, Sensitive: true, Group: GroupCredentials, Description: "Pins the api_key of mailgun connections."},
	{Name: "MAILSVC_POSTMARK_API_KEY", Type: ConstString, Sensitive: true, Group: GroupCredentials, Description: "Pins the api_key of postmark connections."},
	{Name: "MAILSVC_SMTP_USERNAME", Type: ConstString, Sensitive: true, Group: GroupCredentials, Description: "Pins the username of smtp connections."},
	{Name: "MAILSVC_SMTP_PASSWORD", Type: ConstString, Sensitive: true, Group: GroupCredentials, Description: "Pins the password of smtp connections."},
	{Name: "MAILSVC_OUTLOOK_TOKEN", Type: ConstString, Sensitive: true, Group: GroupCredentials, Description: "Pins the refresh_token of outlook connections (when MAILSVC_OUTLOOK_REFRESH_TOKEN is not defined); access tokens are then obtained from it."},
	{Name: "MAIL_SVC_USERNAME", Type: ConstString, Sensitive: true, Group: GroupCredentials, AliasOf: "MAILSVC_SMTP_USERNAME", Description: "Legacy alias of MAILSVC_SMTP_USERNAME."},
	{Name: "MAIL_SVC_PASSWORD", Type: ConstString, Sensitive: true, Group: GroupCredentials, AliasOf: "MAILSVC_SMTP_PASSWORD", Description: "Legacy alias of MAILSVC_SMTP_PASSWORD."},
	{Name: "MAILSVC_MICROSOFT_TOKEN", Type: ConstString, Sensitive: true, Group: GroupCredentials, AliasOf: "MAILSVC_OUTLOOK_TOKEN", Description: "Legacy alias of MAILSVC_OUTLOOK_TOKEN: pins the refresh_token of outlook connections."},

	// Amazon SES.
	{Name: "MAILSVC_AWS_SES_ACCESS_KEY_ID", Type: ConstString, Sensitive: true, Group: GroupSES, Description: "SES API mode: AWS access key id (ses access_key)."},
	{Name: "MAILSVC_AWS_ACCESS_KEY_ID", Type: ConstString, Sensitive: true, Group: GroupSES, AliasOf: "MAILSVC_AWS_SES_ACCESS_KEY_ID", Description: "Alias of MAILSVC_AWS_SES_ACCESS_KEY_ID."},
	{Name: "MAILSVC_AWS_SES_SECRET_KEY", Type: ConstString, Sensitive: true, Group: GroupSES, Description: "SES API mode: AWS secret access key (ses secret)."},
	{Name: "MAILSVC_AWS_SECRET_ACCESS_KEY", Type: ConstString, Sensitive: true, Group: GroupSES, AliasOf: "MAILSVC_AWS_SES_SECRET_KEY", Description: "Alias of MAILSVC_AWS_SES_SECRET_KEY."},
	{Name: "MAILSVC_AWS_REGION", Type: ConstString, Group: GroupSES, Description: "SES API mode: region name, e.g. us-east-1 (ses region)."},
	{Name: "MAILSVC_AWS_SES_CONFIGURATION_SET", Type: ConstString, Group: GroupSES, Description: "SES API mode: configuration set attached to every message (ses configuration_set)."},
	{Name: "MAILSVC_AWS_SES_CUSTOM_ENDPOINT", Type: ConstString, Group: GroupSES, Description: "SES API mode: custom API endpoint URL (ses custom_endpoint)."},
	{Name: "MAILSVC_AWS_SES_ENABLE_V2_API", Type: ConstBool, Default: "false", Group: GroupSES, Description: "SES API mode: use the SES v2 API (ses enable_v2_api)."},
	{Name: "MAILSVC_AWS_SES_STATIC_TAGS", Type: ConstString, Group: GroupSES, Description: "SES API mode: message tags added to every message (ses static_tags)."},
	{Name: "MAILSVC_AWS_SES_SMTP_USERNAME", Type: ConstString, Sensitive: true, Group: GroupSES, Description: "SES SMTP mode: SMTP username (ses smtp_username)."},
	{Name: "MAILSVC_AWS_SES_SMTP_PASSWORD", Type: ConstString, Sensitive: true, Group: GroupSES, Description: "SES SMTP mode: SMTP password (ses smtp_password)."},
	{Name: "MAILSVC_AWS_SES_SMTP_HOST", Type: ConstString, Group: GroupSES, Description: "SES SMTP mode: SMTP host (ses smtp_host)."},
	{Name: "MAILSVC_AWS_SES_SMTP_PORT", Type: ConstInt, Group: GroupSES, Min: Int64(1), Max: Int64(65535), Description: "SES SMTP mode: SMTP port, 1 to 65535 (ses smtp_port)."},
	{Name: "MAILSVC_AWS_SES_SMTP_ENCRYPTION", Type: ConstString, Group: GroupSES, Description: "SES SMTP mode: encryption, e.g. tls (ses smtp_encryption)."},
	{Name: "MAILSVC_AWS_SES_SMTP_REGION", Type: ConstString, Group: GroupSES, Description: "SES SMTP mode: region of the SMTP endpoint (ses smtp_region)."},
	{Name: "MAILSVC_AWS_ENABLE_IMDS_ROLE_SOURCE", Type: ConstBool, Default: "false", Group: GroupSES, Description: "SES: take credentials from the EC2 instance's IAM role (IMDS), no keys (ses imds_role_source)."},
	{Name: "MAILSVC_AWS_EC2_IMDSV2_TOKEN_TTL", Type: ConstInt, Group: GroupSES, Min: Int64(1), Max: Int64(21600), Description: "SES with an EC2 IAM role: IMDSv2 session token lifetime in seconds (ses imds_token_ttl)."},

	// OAuth redirects.
	{Name: "MAILSVC_USE_LOCAL_OAUTH_REDIRECTS", Type: ConstBool, Default: "false", Group: GroupOAuth, Description: "When true, OAuth providers return to this site's own REST callback instead of the hosted relay."},
	{Name: "MAILSVC_GOOGLE_OAUTH_REDIRECT_URI", Type: ConstString, Group: GroupOAuth, Description: "Overrides the OAuth redirect URI for Google."},
	{Name: "MAILSVC_MICROSOFT_OAUTH_REDIRECT_URI", Type: ConstString, Group: GroupOAuth, Description: "Overrides the OAuth redirect URI for Microsoft/Outlook."},
	{Name: "MAILSVC_ZOHO_OAUTH_REDIRECT_URI", Type: ConstString, Group: GroupOAuth, Description: "Overrides the OAuth redirect URI for Zoho."},

	// Behavior.
	{Name: "MAIL_SVC_ENCRYPTION_KEY", Type: ConstString, Sensitive: true, Group: GroupBehavior, Description: "Dedicated key for encrypting connection credentials at rest; changing or removing it makes stored credentials unreadable."},
	{Name: "MAIL_SVC_PRESERVE_DATA", Type: ConstBool, Default: "false", Group: GroupBehavior, Description: "When true, connections, settings and logs stay in the database when the plugin is deleted."},
	{Name: "MAIL_SVC_PRO_ENABLED", Type: ConstBool, Default: "true", Group: GroupBehavior, Description: "When false, the Pro add-on is switched off: every /pro/... route answers 404 like an unknown route, and delivery ignores the Pro settings."},

	// Debug logging.
	{Name: "MAIL_SVC_DEBUG_HTTP", Type: ConstBool, Default: "false", Group: GroupDebug, Description: "Log outgoing HTTP requests."},
	{Name: "MAIL_SVC_DEBUG_QUERIES", Type: ConstBool, Default: "false", Group: GroupDebug, Description: "Append database query summaries at shutdown; requires SAVEQUERIES."},
	{Name: "MAIL_SVC_DEBUG_REQUEST", Type: ConstBool, Default: "false", Group: GroupDebug, Description: "Log incoming request metadata."},
	{Name: "MAIL_SVC_DEBUG_MAILER", Type: ConstBool, Default: "false", Group: GroupDebug, Description: "Log payloads from the mail_svc_api_debug hook."},
	{Name: "MAIL_SVC_DEBUG_SECRET_VISIBILITY", Type: ConstString, Default: VisibilityMask, Group: GroupDebug, Allowed: []string{VisibilityMask, VisibilityShow, VisibilityFull}, Description: "Secrets in debug logs: mask (default), show (exact values, never on a live site) or full ([REDACTED])."},
	{Name: "MAIL_SVC_DEBUG_REQUEST_SECRET_VISIBILITY", Type: ConstString, Group: GroupDebug, Allowed: []string{VisibilityMask, VisibilityShow, VisibilityFull}, Description: "Secret visibility for REQUEST PAYLOAD lines only; empty follows MAIL_SVC_DEBUG_SECRET_VISIBILITY."},
	{Name: "MAIL_SVC_DEBUG_REDACT", Type: ConstBool, Default: "false", Group: GroupDebug, Description: "Legacy: true with no MAIL_SVC_DEBUG_SECRET_VISIBILITY behaves like full."},
	{Name: "MAIL_SVC_DEBUG_ATTACH_API_DEBUG", Type: ConstBool, Default: "false", Group: GroupDebug, Description: "Legacy opt-in for raw browser diagnostics; the mail_svc_api_debug_response_enabled filter is preferred."},
	{Name: "MAIL_SVC_DEBUG_LOG_DIR", Type: ConstString, Group: GroupDebug, Description: "When set, the whole debug log root (SMTP sessions included) moves to <dir>/mail-svc-logs/."},

	// Set by the service itself; never by the site owner.
	{Name: "MAIL_SVC_WP_MAIL_TAKEOVER", Type: ConstBool, Group: GroupService, ServiceSet: true, Description: "Read-only: defined by the service once it has taken over wp_mail()."},
	{Name: "MAIL_SVC_FILE", Type: ConstString, Group: GroupService, ServiceSet: true, Description: "Set by the service at boot: the plugin's main file."},
	{Name: "MAIL_SVC_PATH", Type: ConstString, Group: GroupService, ServiceSet: true, Description: "Set by the service at boot: the plugin's directory."},
	{Name: "MAIL_SVC_URL", Type: ConstString, Group: GroupService, ServiceSet: true, Description: "Set by the service at boot: the plugin's URL."},
	{Name: "MAIL_SVC_PLUGIN_FILE", Type: ConstString, Group: GroupService, ServiceSet: true, Description: "Set by the service at boot: the plugin file path."},
	{Name: "MAIL_SVC_VERSION", Type: ConstString, Group: GroupService, ServiceSet: true, Description: "Set by the service at boot: its version."},
	{Name: "MAIL_SVC_PRO_VERSION", Type: ConstString, Group: GroupService, ServiceSet: true, Description: "Set by the service at boot: the Pro add-on's version."},
	{Name: "MAIL_SVC_VITE_DEV_SERVER", Type: ConstString, Group: GroupService, ServiceSet: true, Description: "Set by the service at boot: admin UI development server switch."},
	{Name: "MAIL_SVC_VITE_DEV_SERVER_URL", Type: ConstString, Group: GroupService, ServiceSet: true, Description: "Set by the service at boot: admin UI development server URL."},

	// Host (WordPress) constants the service reads.
	{Name: "SAVEQUERIES", Type: ConstBool, Default: "false", Group: GroupHost, Description: "WordPress: record database queries; MAIL_SVC_DEBUG_QUERIES requires it."},
	{Name: "WP_ENVIRONMENT_TYPE", Type: ConstString, Default: "production", Group: GroupHost, Allowed: []string{"local", "development", "staging", "production"}, Description: "WordPress environment type; application passwords over plain HTTP only when local; staging, development and local capture mail (docs/staging.md)."},

	// The daemon's own settings.
	{Name: "MAILSVC_DB", Type: ConstString, Sensitive: true, Group: GroupDaemon, Description: "Database: mysql:DSN (go-sql-driver form) or sqlite:PATH; default: the DB_* constants of MAILSVC_WP_CONFIG, else sqlite:$MAILSVC_DATA_DIR/mailsvc.db. The password part is masked."},
	{Name: "MAILSVC_WP_CONFIG", Type: ConstString, Group: GroupDaemon, Description: "Path of the site's wp-config.php; when set, DB credentials, table prefix, salts and constants come from it."},
	{Name: "MAILSVC_SITES", Type: ConstString, Group: GroupDaemon, Description: "Comma-separated wp-config.php paths or glob patterns of the WordPress sites one `mailsvc serve` serves as a fleet (as `--site` flags do); each site keeps its own database, prefix, salts, users, connections, settings and logs. Empty (default): MAILSVC_WP_CONFIG's one site."},
	{Name: "MAILSVC_FLEET_TOKEN", Type: ConstString, Sensitive: true, Group: GroupDaemon, Description: "Bearer token that GET /wp-json/mailsvc/v1/fleet/sites requires (the operator's view of a fleet); empty (default): the route does not exist. Never reachable through a site's bridge."},
	{Name: "MAILSVC_FLEET_ALERT_EMAIL", Type: ConstString, Group: GroupDaemon, Description: "The fleet operator's address: every alert of every site of the fleet is mailed there too, through the site's default connection (its fallback connection when the alert is about the default one). Empty (default): none."},
	{Name: "MAILSVC_FLEET_ALERT_WEBHOOK", Type: ConstString, Group: GroupDaemon, Description: "The fleet operator's webhook URL: every alert of every site of the fleet is posted there too, as the webhook alert channel posts it (MAILSVC_ALLOW_PRIVATE_WEBHOOKS for a private address). Empty (default): none."},
	{Name: "MAILSVC_ENV_FILE", Type: ConstString, Default: "/etc/mailsvc/mailsvc.env", Group: GroupDaemon, Description: "Environment file (systemd's EnvironmentFile= syntax) every command reads for the variables the environment does not set, as the service gets them from its unit; set and empty to read none."},
	{Name: "MAILSVC_TABLE_PREFIX", Type: ConstString, Default: "wp_", Group: GroupDaemon, Description: "Table prefix when no wp-config.php gives $table_prefix."},
	{Name: "MAILSVC_DATA_DIR", Type: ConstString, Default: "./data", Group: GroupDaemon, Description: "Data directory (SQLite database, debug logs, bridge files)."},
	{Name: "MAILSVC_ADDR", Type: ConstString, Default: "127.0.0.1:8025", Group: GroupDaemon, Description: "HTTP listen address of the REST API."},
	{Name: "MAILSVC_TRUSTED_PROXIES", Type: ConstString, Group: GroupDaemon, Description: "Comma-separated IPs/CIDRs whose X-Forwarded-Proto is trusted, and whose X-Forwarded-For names the client (WordPress's application password filters, last_ip)."},
	{Name: "MAILSVC_LOG_LEVEL", Type: ConstString, Default: "info", Group: GroupDaemon, Allowed: []string{"debug", "info", "warn", "error"}, Description: "The lowest level of the service's log lines (standard error, the journal): debug adds a line per HTTP request; warn keeps failed attempts and other trouble only. Read from the environment (and the package's environment file)."},
	{Name: "MAILSVC_REST_CAPABILITY", Type: ConstString, Default: DefaultCapability, Group: GroupDaemon, Description: "Capability every REST route requires (configuration equivalent of the mail_svc_rest_capability filter)."},
	{Name: "MAILSVC_SENSITIVE_KEYS", Type: ConstString, Group: GroupDaemon, Description: "Comma-separated extra sensitive settings keys (configuration equivalent of the mail_svc_sensitive_keys filter)."},
	{Name: "MAILSVC_TLS_CERT", Type: ConstString, Group: GroupDaemon, Description: "TLS certificate file for the HTTP listener; with MAILSVC_TLS_KEY the API is served over HTTPS."},
	{Name: "MAILSVC_TLS_KEY", Type: ConstString, Group: GroupDaemon, Description: "TLS private key file for the HTTP listener."},
	{Name: "MAILSVC_METRICS_TOKEN", Type: ConstString, Sensitive: true, Group: GroupDaemon, Description: "Bearer token that GET /metrics requires (Authorization: Bearer TOKEN); empty (default) serves the metrics to loopback clients only, without forwarding headers. The same token (or loopback) reads why /readyz fails."},
	{Name: "MAILSVC_WORKERS", Type: ConstInt, Default: "8", Group: GroupDaemon, Min: Int64(1), Max: Int64(256), Description: "Number of delivery workers of this process, 1 to 256."},
	{Name: "MAILSVC_BATCH_SIZE", Type: ConstInt, Default: "100", Group: GroupDaemon, Min: Int64(1), Max: Int64(1000), Description: "Queued messages a delivery worker claims at once, 1 to 1000."},
	{Name: "MAILSVC_MAX_IN_FLIGHT", Type: ConstInt, Default: "1000", Group: GroupDaemon, Min: Int64(1), Max: Int64(10000), Description: "Ceiling of the messages this process holds at once (claimed and being sent, across all connections), 1 to 10000; each connection is further bounded by its max_concurrency."},
	{Name: "MAILSVC_QUEUE_LEASE", Type: ConstInt, Default: "60", Group: GroupDaemon, Min: Int64(2), Max: Int64(3600), Description: "Seconds a claimed batch stays with its worker (renewed while sending); after a crash its messages are requeued this long after the claim, 2 to 3600."},
	{Name: "MAILSVC_SMTP_LISTEN", Type: ConstString, Group: GroupDaemon, Description: "HOST:PORT of the SMTP submission listener (AUTH with an application password of a user holding MAILSVC_REST_CAPABILITY); empty (default) leaves it off. AUTH is offered on plain text only on a loopback address."},
	{Name: "MAILSVC_SMTP_MAX_BYTES", Type: ConstInt, Default: "26214400", Group: GroupDaemon, Min: Int64(1024), Max: Int64(1 << 30), Description: "Largest message the SMTP submission listener accepts, in bytes (announced as EHLO SIZE; larger messages get 552), 1024 to 1073741824."},
	{Name: "MAILSVC_SMTP_TLS_CERT", Type: ConstString, Group: GroupDaemon, Description: "TLS certificate file of the SMTP submission listener; with MAILSVC_SMTP_TLS_KEY it offers STARTTLS."},
	{Name: "MAILSVC_SMTP_TLS_KEY", Type: ConstString, Group: GroupDaemon, Description: "TLS private key file of the SMTP submission listener."},
	{Name: "MAILSVC_ENVIRONMENT", Type: ConstString, Group: GroupDaemon, Allowed: []string{"production", "staging", "development"}, Description: "The site's environment for the staging guard: production sends mail even from what looks like a copy; staging and development capture it (held, not sent) except for capture_allow_list. Unset: the guard decides from WordPress's environment type and the site's fingerprint. See docs/staging.md."},
	{Name: "MAILSVC_PUBLIC_URL", Type: ConstString, Group: GroupDaemon, Description: "The site's public base URL, under which /wp-json/mailsvc/v1 reaches this service (for OAuth callback URIs); default: the site's home option beside WordPress, else the address the request came to."},
	{Name: "MAILSVC_HOOK_RUNNER_URL", Type: ConstString, Group: GroupDaemon, Description: "Beside WordPress: the URL at which the service asks the site to run its pending hooks (docs/hooks.md); default: the bridge's runner route under the site's stored home address (index.php?rest_route=/mailsvc-bridge/v1/hooks), never an address a request chose."},
	{Name: "MAILSVC_FILTERS_REFRESH", Type: ConstInt, Group: GroupDaemon, Min: Int64(1), Max: Int64(3600), Description: "Beside WordPress: seconds for which the service keeps what the site's filters decided (the capability, the application password rules, ...) before reading what the bridge published again; a change in PHP takes effect within this time of the next page load (default 30)."},
	{Name: "MAILSVC_ADMIN_URL", Type: ConstString, Group: GroupDaemon, Description: "The admin page an OAuth callback returns to; default: {siteurl}/wp-admin/admin.php?page=mailsvc beside WordPress, else {public URL}/admin/. Beside WordPress its origin is also the one allowed to frame the admin screens (frame-ancestors)."},
	{Name: "MAILSVC_OAUTH_RELAY_URL", Type: ConstString, Default: "https://oauth.mailsvc.dev/callback", Group: GroupOAuth, Description: "The hosted OAuth relay that providers return to unless MAILSVC_USE_LOCAL_OAUTH_REDIRECTS or a per-provider redirect constant says otherwise; it forwards code and state to this site's callback."},
	{Name: "MAILSVC_ALLOW_PRIVATE_WEBHOOKS", Type: ConstBool, Default: "false", Group: GroupDaemon, Description: "When true, alert channels may post to loopback, link-local, private and other special-purpose addresses (intranets, tests); off, such URLs are refused."},
	{Name: AllowCustomEndpointsConstant, Type: ConstBool, Default: "false", Group: GroupDaemon, Description: "When true, a connection's endpoint settings (base_url, oauth_base_url, SES custom_endpoint and imds_endpoint) may name any URL (tests, on-premise gateways); off, they must be on the provider's own hosts."},
	{Name: "MAILSVC_TELEGRAM_API_URL", Type: ConstString, Default: "https://api.telegram.org", Group: GroupDaemon, Description: "Base URL of the Telegram Bot API used by telegram alert channels."},
	{Name: "MAILSVC_TWILIO_API_URL", Type: ConstString, Default: "https://api.twilio.com", Group: GroupDaemon, Description: "Base URL of the Twilio REST API used by twilio (SMS) alert channels (a proxy, or a local stand-in for tests); reached through the alert address guard, so a private address needs MAILSVC_ALLOW_PRIVATE_WEBHOOKS."},
	{Name: "MAILSVC_ALERT_FOLD_MINUTES", Type: ConstInt, Default: "30", Group: GroupDaemon, Min: Int64(0), Max: Int64(1440), Description: "Repeats of one alert event for one connection inside this many minutes are folded into the first, 0 to 1440."},
	{Name: "MAILSVC_QUEUE_STALLED_MINUTES", Type: ConstInt, Default: "15", Group: GroupDaemon, Min: Int64(1), Max: Int64(10080), Description: "The queue_stalled alert fires when the oldest queued message waits longer than this many minutes, 1 to 10080."},
	{Name: "MAILSVC_HEALTH_SLOW_MS", Type: ConstInt, Default: "5000", Group: GroupDaemon, Min: Int64(1), Max: Int64(600000), Description: "A health check that passes but takes longer than this many milliseconds marks the connection degraded."},
	{Name: "MAILSVC_SCHEDULER_MINUTE", Type: ConstInt, Default: "60", Group: GroupDaemon, Min: Int64(1), Max: Int64(60), Description: "Seconds in one minute of the scheduler's intervals (health_check_interval, oauth_refresh_interval); lower it only for tests and demos."},
	{Name: "MAILSVC_REPORT_CLOCK_OFFSET", Type: ConstInt, Default: "0", Group: GroupDaemon, Min: Int64(-366 * 86400), Max: Int64(366 * 86400), Description: "Seconds added to the clock the summary report reads to choose its period, -31622400 to 31622400; set it only for tests and demos (a report of a chosen day without waiting for it); 0 (default) in production."},
	{Name: "MAILSVC_LICENSE_PUBLIC_KEYS", Type: ConstString, Sensitive: true, Group: GroupDaemon, Description: "Comma-separated base64 Ed25519 vendor public keys trusted for Pro licence keys, besides the built-in one. Not secret; masked only because its name says key."},
	{Name: "MAILSVC_LICENSE_SERVER", Type: ConstString, Group: GroupDaemon, Description: "Base URL of the vendor's licence server (docs/pro.md), told on licence activation and deactivation and asked on refresh; empty (default): licences are verified offline only."},
	{Name: "MAILSVC_DNS_RESOLVER", Type: ConstString, Group: GroupDaemon, Description: "DNS resolver (host:port, port 53 when omitted) the Pro domain check queries; empty (default): the first nameserver of /etc/resolv.conf."},
	{Name: "MAILSVC_ONECLICK_GOOGLE_CLIENT_ID", Type: ConstString, Group: GroupOAuth, Description: "Client ID of the vendor's Google OAuth app that Pro's one-click OAuth authorizes Gmail connections with; empty: one-click Google is not offered."},
	{Name: "MAILSVC_ONECLICK_GOOGLE_CLIENT_SECRET", Type: ConstString, Sensitive: true, Group: GroupOAuth, Description: "Client secret of the vendor's Google OAuth app of one-click OAuth."},
	{Name: "MAILSVC_ONECLICK_GOOGLE_OAUTH_BASE_URL", Type: ConstString, Group: GroupOAuth, Description: "Replaces https://accounts.google.com and https://oauth2.googleapis.com for one-click Google connections (tests); empty (default): Google's servers."},
	{Name: "MAILSVC_ONECLICK_MICROSOFT_CLIENT_ID", Type: ConstString, Group: GroupOAuth, Description: "Client ID of the vendor's Microsoft Entra app that Pro's one-click OAuth authorizes Outlook connections with; empty: one-click Microsoft is not offered."},
	{Name: "MAILSVC_ONECLICK_MICROSOFT_CLIENT_SECRET", Type: ConstString, Sensitive: true, Group: GroupOAuth, Description: "Client secret of the vendor's Microsoft Entra app of one-click OAuth."},
	{Name: "MAILSVC_ONECLICK_MICROSOFT_OAUTH_BASE_URL", Type: ConstString, Group: GroupOAuth, Description: "Replaces https://login.microsoftonline.com for one-click Outlook connections (tests); empty (default): Microsoft's servers."},
	{Name: "MAILSVC_WP_PATH", Type: ConstString, Group: GroupDaemon, Description: "WordPress directory (ABSPATH), to read plugin headers for GET /tools/plugins when wp-config.php defines neither WP_PLUGIN_DIR nor WP_CONTENT_DIR; default: ABSPATH of wp-config.php, else its directory."},
}

var constantIndex = func() map[string]*ConstantDef {
	m := make(map[string]*ConstantDef, len(ConstantCatalog))
	for i := range ConstantCatalog {
		m[ConstantCatalog[i].Name] = &ConstantCatalog[i]
	}
	return m
}()

// LookupConstantDef returns the catalog entry of a constant.
func LookupConstantDef(name string) (ConstantDef, bool) {
	d, ok := constantIndex[name]
	if !ok {
		return ConstantDef{}, false
	}
	return *d, true
}

// sesPins maps each ses settings key to its named constants, canonical
// first. The generic MAILSVC_SES_{KEY} is tried before them.
var sesPins = map[string][]string{
	"region":            {"MAILSVC_AWS_REGION"},
	"access_key":        {"MAILSVC_AWS_SES_ACCESS_KEY_ID", "MAILSVC_AWS_ACCESS_KEY_ID"},
	"secret":            {"MAILSVC_AWS_SES_SECRET_KEY", "MAILSVC_AWS_SECRET_ACCESS_KEY"},
	"configuration_set": {"MAILSVC_AWS_SES_CONFIGURATION_SET"},
	"custom_endpoint":   {"MAILSVC_AWS_SES_CUSTOM_ENDPOINT"},
	"enable_v2_api":     {"MAILSVC_AWS_SES_ENABLE_V2_API"},
	"static_tags":       {"MAILSVC_AWS_SES_STATIC_TAGS"},
	"smtp_username":     {"MAILSVC_AWS_SES_SMTP_USERNAME"},
	"smtp_password":     {"MAILSVC_AWS_SES_SMTP_PASSWORD"},
	"smtp_host":         {"MAILSVC_AWS_SES_SMTP_HOST"},
	"smtp_port":         {"MAILSVC_AWS_SES_SMTP_PORT"},
	"smtp_encryption":   {"MAILSVC_AWS_SES_SMTP_ENCRYPTION"},
	"smtp_region":       {"MAILSVC_AWS_SES_SMTP_REGION"},
	"imds_role_source":  {"MAILSVC_AWS_ENABLE_IMDS_ROLE_SOURCE"},
	"imds_token_ttl":    {"MAILSVC_AWS_EC2_IMDSV2_TOKEN_TTL"},
}

// legacyPins maps driver → settings key → alias constants tried after
// MAILSVC_{DRIVER}_{KEY}.
var legacyPins = map[string]map[string][]string{
	"smtp": {
		"username": {"MAIL_SVC_USERNAME"},
		"password": {"MAIL_SVC_PASSWORD"},
	},
	"outlook": {
		"refresh_token": {"MAILSVC_OUTLOOK_TOKEN", "MAILSVC_MICROSOFT_TOKEN"},
	},
}

// PinConstants returns the constants that can pin a driver's settings key,
// highest precedence first: MAILSVC_{DRIVER}_{KEY}, then the spec's named
// constants and legacy aliases for that key.
func PinConstants(driver, key string) []string {
	out := []string{ConstantName(driver, key)}
	if driver == "ses" {
		out = append(out, sesPins[key]...)
	}
	out = append(out, legacyPins[driver][key]...)
	return out
}

// Pin is a settings key whose value a constant fixes.
type Pin struct {
	Constant string         `json:"constant"` // the constant that gave the value
	Value    string         `json:"-"`        // never serialised: it may be a secret
	Source   ConstantSource `json:"source"`
}

// ConstantEntry is one constant as `mailsvc config` shows it.
type ConstantEntry struct {
	Name        string         `json:"name"`
	Type        ConstantType   `json:"type"`
	Group       string         `json:"group"`
	Default     string         `json:"default"`
	Value       string         `json:"value"` // effective value, masked when sensitive
	Source      ConstantSource `json:"source"`
	Defined     bool           `json:"defined"` // defined (non-empty) in wp-config or the environment
	Sensitive   bool           `json:"sensitive"`
	AliasOf     string         `json:"alias_of,omitempty"`
	Description string         `json:"description"`
}

// Constants holds the constants in effect: read once at boot from
// wp-config.php and the environment, immutable after. Safe for concurrent
// use.
type Constants struct {
	wpconfig map[string]string
	env      func(string) (string, bool)
	invalid  map[string]bool // typed constants whose value failed validation

	mu       sync.Mutex
	envCache map[string]envValue
}

type envValue struct {
	v  string
	ok bool
}

// NewConstants resolves constants from wpconfig (name → value as the
// wp-config reader renders it; nil when there is no wp-config.php) and the
// environment (env is typically os.LookupEnv; nil for none). Every catalog
// name and every registered driver's credential constant is read from the
// environment now; other names are read on first use and kept. It returns
// a warning for each service-set constant a site owner defined, each typed
// constant with an invalid value (which is then ignored), and each
// MAILSVC_/MAIL_SVC_ constant in wp-config.php that nothing reads.
func NewConstants(wpconfig map[string]string, env func(string) (string, bool)) (*Constants, []string) {
	c := &Constants{
		wpconfig: make(map[string]string, len(wpconfig)),
		env:      env,
		invalid:  map[string]bool{},
		envCache: map[string]envValue{},
	}
	for k, v := range wpconfig {
		c.wpconfig[k] = v
	}
	for _, d := range ConstantCatalog {
		c.envLookup(d.Name)
	}
	for _, drv := range Drivers() {
		for _, f := range drv.Fields {
			c.envLookup(ConstantName(drv.Slug, f.Key))
		}
	}

	var warnings []string
	for _, d := range ConstantCatalog {
		v, src, ok := c.raw(d.Name)
		if d.ServiceSet {
			if _, inWP := c.wpconfig[d.Name]; inWP {
				warnings = append(warnings, fmt.Sprintf("%s is set by the service itself and must not be defined in wp-config.php; the definition is ignored.", d.Name))
				c.invalid[d.Name] = true
			} else if _, inEnv := c.envLookup(d.Name); inEnv {
				warnings = append(warnings, fmt.Sprintf("%s is set by the service itself and must not be defined in the environment; the definition is ignored.", d.Name))
				c.invalid[d.Name] = true
			}
			continue
		}
		if !ok {
			continue
		}
		if msg := d.check(v); msg != "" {
			warnings = append(warnings, fmt.Sprintf("%s (from %s) %s; it is ignored.", d.Name, src, msg))
			c.invalid[d.Name] = true
		}
	}

	names := make([]string, 0, len(c.wpconfig))
	for k := range c.wpconfig {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, n := range names {
		if (strings.HasPrefix(n, "MAILSVC_") || strings.HasPrefix(n, "MAIL_SVC_")) && constantIndex[n] == nil && !isDriverConstant(n) {
			warnings = append(warnings, fmt.Sprintf("%s is defined in wp-config.php but is not a known constant nor the credential of a registered driver.", n))
		}
	}
	return c, warnings
}

// isDriverConstant reports whether name is MAILSVC_{DRIVER}_{KEY} of a
// registered driver's schema field.
func isDriverConstant(name string) bool {
	for _, drv := range Drivers() {
		for _, f := range drv.Fields {
			if ConstantName(drv.Slug, f.Key) == name {
				return true
			}
		}
	}
	return false
}

// check validates a non-empty value against the definition and returns a
// message, or "".
func (d *ConstantDef) check(v string) string {
	switch d.Type {
	case ConstBool:
		if _, ok := ParseBoolConstant(v); !ok {
			return fmt.Sprintf("must be a boolean (true/false/1/0), got %q", v)
		}
	case ConstInt:
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Sprintf("must be a whole number, got %q", v)
		}
		if d.Min != nil && n < *d.Min || d.Max != nil && n > *d.Max {
			return fmt.Sprintf("must be between %d and %d, got %d", *d.Min, *d.Max, n)
		}
	}
	if len(d.Allowed) > 0 {
		lv := strings.ToLower(strings.TrimSpace(v))
		for _, a := range d.Allowed {
			if a == lv {
				return ""
			}
		}
		return fmt.Sprintf("must be one of %s, got %q", strings.Join(d.Allowed, ", "), v)
	}
	return ""
}

// ParseBoolConstant reads a boolean constant as written in wp-config.php
// or the environment: true/false, 1/0, yes/no, on/off, case-insensitive.
func ParseBoolConstant(v string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes", "on":
		return true, true
	case "false", "0", "no", "off":
		return false, true
	}
	return false, false
}

func (c *Constants) envLookup(name string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ev, ok := c.envCache[name]; ok {
		return ev.v, ev.ok
	}
	var ev envValue
	if c.env != nil {
		ev.v, ev.ok = c.env(name)
	}
	c.envCache[name] = ev
	return ev.v, ev.ok
}

// raw returns a name's own value, ignoring aliases and validity: wp-config
// first, then the environment; an empty value counts as undefined.
func (c *Constants) raw(name string) (string, ConstantSource, bool) {
	if c == nil {
		return "", SourceDefault, false
	}
	if v, ok := c.wpconfig[name]; ok && v != "" {
		return v, SourceWPConfig, true
	}
	if v, ok := c.envLookup(name); ok && v != "" {
		return v, SourceEnvironment, true
	}
	return "", SourceDefault, false
}

// own is raw minus values rejected at boot.
func (c *Constants) own(name string) (string, ConstantSource, bool) {
	if c == nil || c.invalid[name] {
		return "", SourceDefault, false
	}
	return c.raw(name)
}

// resolve returns the constant that gives name its value: name itself, or
// else the first of its aliases that is defined.
func (c *Constants) resolve(name string) (string, string, ConstantSource, bool) {
	if v, src, ok := c.own(name); ok {
		return name, v, src, true
	}
	for _, d := range ConstantCatalog {
		if d.AliasOf == name {
			if v, src, ok := c.own(d.Name); ok {
				return d.Name, v, src, true
			}
		}
	}
	return "", "", SourceDefault, false
}

// Lookup returns a constant's value and where it came from. ok is true
// only when the constant (or, for a canonical name, one of its legacy
// aliases) is defined with a non-empty, valid value; otherwise value is
// the catalog default and src is SourceDefault.
func (c *Constants) Lookup(name string) (value string, src ConstantSource, ok bool) {
	if _, v, s, ok := c.resolve(name); ok {
		return v, s, true
	}
	if d, ok := constantIndex[name]; ok {
		return d.Default, SourceDefault, false
	}
	return "", SourceDefault, false
}

// String returns a constant's effective value, or its catalog default.
func (c *Constants) String(name string) string {
	v, _, _ := c.Lookup(name)
	return v
}

// Bool returns a boolean constant's effective value, or its catalog
// default (false when it has none).
func (c *Constants) Bool(name string) bool {
	v, _, _ := c.Lookup(name)
	b, _ := ParseBoolConstant(v)
	return b
}

// Int returns an integer constant's effective value, or def when it is
// not defined or not a whole number.
func (c *Constants) Int(name string, def int64) int64 {
	v, _, ok := c.Lookup(name)
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return def
	}
	return n
}

// Pins returns, for each of a driver's settings keys pinned by a constant,
// the constant and its value. The constants tried are those of
// PinConstants, in that order, so a canonical name wins over its alias.
func (c *Constants) Pins(driver string, keys []string) map[string]Pin {
	out := map[string]Pin{}
	for _, k := range keys {
		for _, name := range PinConstants(driver, k) {
			if v, src, ok := c.own(name); ok {
				out[k] = Pin{Constant: name, Value: v, Source: src}
				break
			}
		}
	}
	return out
}

// SecretVisibility returns how debug logs show secrets: the value of
// MAIL_SVC_DEBUG_SECRET_VISIBILITY when valid; "full" when it is not
// defined and the legacy MAIL_SVC_DEBUG_REDACT is true; "mask" otherwise
// (an invalid value was warned about at boot).
func (c *Constants) SecretVisibility() string {
	if v, _, ok := c.own("MAIL_SVC_DEBUG_SECRET_VISIBILITY"); ok {
		return strings.ToLower(strings.TrimSpace(v))
	}
	if _, _, ok := c.raw("MAIL_SVC_DEBUG_SECRET_VISIBILITY"); ok {
		return VisibilityMask // defined but invalid
	}
	if c.Bool("MAIL_SVC_DEBUG_REDACT") {
		return VisibilityFull
	}
	return VisibilityMask
}

// RequestSecretVisibility returns the secret visibility of REQUEST PAYLOAD
// debug lines: MAIL_SVC_DEBUG_REQUEST_SECRET_VISIBILITY when valid,
// "mask" when it is defined but invalid, else SecretVisibility.
func (c *Constants) RequestSecretVisibility() string {
	const name = "MAIL_SVC_DEBUG_REQUEST_SECRET_VISIBILITY"
	if v, _, ok := c.own(name); ok {
		return strings.ToLower(strings.TrimSpace(v))
	}
	if _, _, ok := c.raw(name); ok {
		return VisibilityMask
	}
	return c.SecretVisibility()
}

// Entries returns every catalog constant, then every defined credential
// constant of a registered driver that is not in the catalog, with its
// effective value (masked when sensitive), source, type and description.
func (c *Constants) Entries() []ConstantEntry {
	out := make([]ConstantEntry, 0, len(ConstantCatalog))
	for _, d := range ConstantCatalog {
		e := ConstantEntry{
			Name: d.Name, Type: d.Type, Group: d.Group, Default: d.Default,
			Sensitive: d.Sensitive, AliasOf: d.AliasOf, Description: d.Description,
		}
		v, src, ok := c.Lookup(d.Name)
		if d.AliasOf != "" { // an alias shows only its own value
			v, src, ok = c.own(d.Name)
			if !ok {
				v = d.Default
			}
		}
		e.Value, e.Source, e.Defined = v, src, ok
		if ok {
			e.Value = maskConstant(d.Name, v, d.Sensitive)
		}
		out = append(out, e)
	}
	for _, drv := range Drivers() {
		for _, f := range drv.Fields {
			name := ConstantName(drv.Slug, f.Key)
			if constantIndex[name] != nil {
				continue
			}
			v, src, ok := c.own(name)
			if !ok {
				continue
			}
			sensitive := f.Sensitive || f.Type == FieldPassword || IsSensitiveKey(f.Key, nil)
			out = append(out, ConstantEntry{
				Name: name, Type: ConstString, Group: GroupCredentials,
				Value: maskConstant(name, v, sensitive), Source: src, Defined: true,
				Sensitive:   sensitive,
				Description: fmt.Sprintf("Pins the %s of %s connections.", f.Key, drv.Slug),
			})
		}
	}
	return out
}

func maskConstant(name, v string, sensitive bool) string {
	switch {
	case !sensitive || v == "":
		return v
	case name == "MAILSVC_DB":
		return MaskDSN(v)
	default:
		return Mask
	}
}

// MaskDSN returns a database DSN with its password replaced by Mask. It
// understands go-sql-driver MySQL DSNs (user:pass@tcp(host)/db?…), the
// same with MAILSVC_DB's "mysql:" prefix, and URL forms
// (scheme://user:pass@host/…); a DSN without a password (an SQLite path)
// is returned unchanged.
func MaskDSN(dsn string) string {
	rest, prefix := dsn, ""
	if strings.HasPrefix(dsn, "mysql:") && !strings.HasPrefix(dsn, "mysql://") {
		return "mysql:" + MaskDSN(dsn[len("mysql:"):])
	}
	if i := strings.Index(dsn, "://"); i >= 0 {
		prefix, rest = dsn[:i+3], dsn[i+3:]
		// In a URL the user info ends at the last '@' before the first '/'.
		end := len(rest)
		if j := strings.IndexAny(rest, "/?#"); j >= 0 {
			end = j
		}
		if masked, ok := maskPassword(rest, end); ok {
			return prefix + masked
		}
		return dsn
	}
	// go-sql-driver: the credentials end at the last '@' before the last
	// '/'. A DSN without the '/' is not one the driver takes, but it is
	// still masked up to its last '@' when echoed in an error.
	end := len(rest)
	if slash := strings.LastIndex(rest, "/"); slash >= 0 {
		end = slash
	}
	if masked, ok := maskPassword(rest, end); ok {
		return masked
	}
	return dsn
}

// maskPassword returns s with the password of its user info, which ends
// at the last '@' before end, replaced by Mask; ok is false when s has no
// user info with a password there.
func maskPassword(s string, end int) (masked string, ok bool) {
	at := strings.LastIndex(s[:end], "@")
	if at < 0 {
		return "", false
	}
	user, _, hasPass := strings.Cut(s[:at], ":")
	if !hasPass {
		return "", false
	}
	return user + ":" + Mask + s[at:], true
}
