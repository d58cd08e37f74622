package store

// The services: one per concept, each implementing its port in core (or
// the small interface its consumer declares), all sharing one handle.
// Take them from an open DB (db.Logs(), db.Connections(), …); services
// taken from the DB that InTransaction hands to its function run inside
// that transaction.

// LogService is the message log and its queue: core.LogStore and
// core.LogBodyStore, with batch enqueue, claims, outcome recording,
// imports, search and the outcome roll-ups. Its queries are hand-tuned
// database/sql.
type LogService struct{ *handle }

// SearchIndexService keeps the log search's side tables filled: the
// recipients and subjects entries of logs not indexed yet, and the
// address dictionary's background work (log_recipients.go,
// log_search_addresses.go). The search itself is LogService.FindLogs.
type SearchIndexService struct{ *handle }

// LeaseService holds named leases (one holder at a time across processes)
// and the replicas' heartbeats.
type LeaseService struct{ *handle }

// JobService records scheduled job runs: core.JobStore.
type JobService struct{ *handle }

// ConnectionService persists connections with gorm: core.ConnectionStore
// and core.ConnectionStateStore.
type ConnectionService struct{ *handle }

// SettingsService persists the settings scopes with gorm:
// core.SettingsStore.
type SettingsService struct{ *handle }

// NotificationService persists alert channels with gorm, and their
// thresholds' quiet periods: core.NotificationStore.
type NotificationService struct{ *handle }

// OAuthService keeps OAuth flow states and token refresh history:
// core.OAuthStateStore and core.RefreshHistoryStore.
type OAuthService struct{ *handle }

// AlertHistoryService records sent alerts: core.AlertHistoryStore.
type AlertHistoryService struct{ *handle }

// CaptureService keeps the site fingerprint and releases captured mail:
// core.CaptureStore.
type CaptureService struct{ *handle }

// FloodService reads the sources' volumes the flood guard learns from,
// and releases and discards held mail: core.FloodStore.
type FloodService struct{ *handle }

// EmailControlService counts the messages WordPress's email controls
// stopped: core.EmailControlCounter.
type EmailControlService struct{ *handle }

// HostHookService is the outbox of events for WordPress's hooks.
type HostHookService struct{ *handle }

// PrivacyService finds and erases the personal data of one address:
// core.PersonalDataStore.
type PrivacyService struct{ *handle }

// RollupService keeps the outcome roll-ups' tables: it compacts the
// quarter-hour rows into coarser ones (rollup_compact.go) and adds a
// module's counters inside its transaction (log_rollup.go). The roll-ups
// grow with the outcomes LogService records.
type RollupService struct{ *handle }

// SchemaService reads the service's schema history: the versions
// applied and the columns a migration step looks for (db.go,
// migrate.go). Migrating is the DB's own (DB.Migrate).
type SchemaService struct{ *handle }

// InstallationService is the service's footprint in the database: its
// tables and its and its bridge's rows in WordPress's tables (every
// site's options, the network's options, the users' meta), what uninstall
// removes, and whether the database itself exists (uninstall.go).
type InstallationService struct{ *handle }

// SiteService reserves the network sites' sending quotas and counts their
// logs: core.SiteQuotaStore.
type SiteService struct{ *handle }

// Logs returns the log and queue service.
func (db *DB) Logs() *LogService { return &LogService{db.handle} }

// SearchIndex returns the log search's index service.
func (db *DB) SearchIndex() *SearchIndexService { return &SearchIndexService{db.handle} }

// Leases returns the lease and replica service.
func (db *DB) Leases() *LeaseService { return &LeaseService{db.handle} }

// Jobs returns the job run service.
func (db *DB) Jobs() *JobService { return &JobService{db.handle} }

// Connections returns the connection service.
func (db *DB) Connections() *ConnectionService { return &ConnectionService{db.handle} }

// Settings returns the settings service.
func (db *DB) Settings() *SettingsService { return &SettingsService{db.handle} }

// Notifications returns the alert channel service.
func (db *DB) Notifications() *NotificationService { return &NotificationService{db.handle} }

// OAuth returns the OAuth state and refresh history service.
func (db *DB) OAuth() *OAuthService { return &OAuthService{db.handle} }

// AlertHistory returns the alert history service.
func (db *DB) AlertHistory() *AlertHistoryService { return &AlertHistoryService{db.handle} }

// Flood returns the flood guard's service.
func (db *DB) Flood() *FloodService { return &FloodService{db.handle} }

// Capture returns the capture service.
func (db *DB) Capture() *CaptureService { return &CaptureService{db.handle} }

// EmailControls returns the email control counter service.
func (db *DB) EmailControls() *EmailControlService { return &EmailControlService{db.handle} }

// HostHooks returns the host hook outbox service.
func (db *DB) HostHooks() *HostHookService { return &HostHookService{db.handle} }

// Privacy returns the personal data service.
func (db *DB) Privacy() *PrivacyService { return &PrivacyService{db.handle} }

// Rollups returns the outcome roll-ups' upkeep.
func (db *DB) Rollups() *RollupService { return &RollupService{db.handle} }

// Schema returns the schema history's reads.
func (db *DB) Schema() *SchemaService { return &SchemaService{db.handle} }

// Installation returns the service's tables and options in the database.
func (db *DB) Installation() *InstallationService { return &InstallationService{db.handle} }

// Sites returns the network sites' quota service.
func (db *DB) Sites() *SiteService { return &SiteService{db.handle} }
