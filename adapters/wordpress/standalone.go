package wordpress

import (
	"context"
	"crypto/rand"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/mailsvc/mailsvc/core"
)

// defaultUserRoles is the serialized "{prefix}user_roles" option a fresh
// WordPress install writes: the five default roles exactly as
// populate_roles() (wp-admin/includes/schema.php, 6.1.9; unchanged in 6.8)
// builds them. TestDefaultRolesMatchWordPress regenerates it with PHP from
// the installed WordPress source.
//
//go:embed default_user_roles.ser
var defaultUserRoles string

// DefaultUserRoles returns the default roles option value WordPress writes
// on install (administrator, editor, author, contributor, subscriber).
func DefaultUserRoles() string { return defaultUserRoles }

// SchemaOption configures EnsureSchema.
type SchemaOption func(*schemaConfig)

type schemaConfig struct {
	siteURL string
}

// WithSiteURL sets the siteurl and home options seeded by EnsureSchema
// when they do not exist yet (default "http://localhost").
func WithSiteURL(u string) SchemaOption {
	return func(c *schemaConfig) { c.siteURL = strings.TrimRight(u, "/") }
}

// mysqlSchema is WordPress's wp_get_db_schema('all') for the three tables
// (single site), with IF NOT EXISTS. %[1]s is the prefix.
const mysqlSchema = `CREATE TABLE IF NOT EXISTS %[1]susers (
	ID bigint(20) unsigned NOT NULL auto_increment,
	user_login varchar(60) NOT NULL default '',
	user_pass varchar(255) NOT NULL default '',
	user_nicename varchar(50) NOT NULL default '',
	user_email varchar(100) NOT NULL default '',
	user_url varchar(100) NOT NULL default '',
	user_registered datetime NOT NULL default '0000-00-00 00:00:00',
	user_activation_key varchar(255) NOT NULL default '',
	user_status int(11) NOT NULL default '0',
	display_name varchar(250) NOT NULL default '',
	PRIMARY KEY  (ID),
	KEY user_login_key (user_login),
	KEY user_nicename (user_nicename),
	KEY user_email (user_email)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_520_ci;
CREATE TABLE IF NOT EXISTS %[1]susermeta (
	umeta_id bigint(20) unsigned NOT NULL auto_increment,
	user_id bigint(20) unsigned NOT NULL default '0',
	meta_key varchar(255) default NULL,
	meta_value longtext,
	PRIMARY KEY  (umeta_id),
	KEY user_id (user_id),
	KEY meta_key (meta_key(191))
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_520_ci;
CREATE TABLE IF NOT EXISTS %[1]soptions (
	option_id bigint(20) unsigned NOT NULL auto_increment,
	option_name varchar(191) NOT NULL default '',
	option_value longtext NOT NULL,
	autoload varchar(20) NOT NULL default 'yes',
	PRIMARY KEY  (option_id),
	UNIQUE KEY option_name (option_name),
	KEY autoload (autoload)
) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_520_ci`

// sqliteSchema is the same tables for SQLite: the same column names and
// declared types where SQLite allows them, integer row-id keys, and
// NOCASE on user_login/user_email so lookups are case-insensitive like
// MySQL's default collation.
const sqliteSchema = `CREATE TABLE IF NOT EXISTS %[1]susers (
	ID integer PRIMARY KEY AUTOINCREMENT,
	user_login varchar(60) NOT NULL default '' COLLATE NOCASE,
	user_pass varchar(255) NOT NULL default '',
	user_nicename varchar(50) NOT NULL default '',
	user_email varchar(100) NOT NULL default '' COLLATE NOCASE,
	user_url varchar(100) NOT NULL default '',
	user_registered datetime NOT NULL default '0000-00-00 00:00:00',
	user_activation_key varchar(255) NOT NULL default '',
	user_status int(11) NOT NULL default '0',
	display_name varchar(250) NOT NULL default ''
);
CREATE INDEX IF NOT EXISTS %[1]susers_user_login_key ON %[1]susers (user_login);
CREATE INDEX IF NOT EXISTS %[1]susers_user_nicename ON %[1]susers (user_nicename);
CREATE INDEX IF NOT EXISTS %[1]susers_user_email ON %[1]susers (user_email);
CREATE TABLE IF NOT EXISTS %[1]susermeta (
	umeta_id integer PRIMARY KEY AUTOINCREMENT,
	user_id bigint(20) NOT NULL default '0',
	meta_key varchar(255) default NULL,
	meta_value longtext
);
CREATE INDEX IF NOT EXISTS %[1]susermeta_user_id ON %[1]susermeta (user_id);
CREATE INDEX IF NOT EXISTS %[1]susermeta_meta_key ON %[1]susermeta (meta_key);
CREATE TABLE IF NOT EXISTS %[1]soptions (
	option_id integer PRIMARY KEY AUTOINCREMENT,
	option_name varchar(191) NOT NULL default '' UNIQUE,
	option_value longtext NOT NULL,
	autoload varchar(20) NOT NULL default 'yes'
);
CREATE INDEX IF NOT EXISTS %[1]soptions_autoload ON %[1]soptions (autoload)`

// wpIncompatibleModes are the SQL modes wpdb::set_sql_mode() removes; the
// WordPress schema (zero-date defaults) needs them off.
var wpIncompatibleModes = map[string]bool{
	"NO_ZERO_DATE": true, "ONLY_FULL_GROUP_BY": true, "STRICT_TRANS_TABLES": true,
	"STRICT_ALL_TABLES": true, "TRADITIONAL": true, "ANSI": true,
}

// isMySQL reports whether db talks to MySQL/MariaDB (else SQLite).
func isMySQL(db *gorm.DB) bool {
	return db.Dialector.Name() == "mysql"
}

// EnsureSchema creates {prefix}users, {prefix}usermeta and {prefix}options
// with WordPress's columns (MySQL/MariaDB: WordPress's own DDL; SQLite: the
// equivalent) if they do not exist, and seeds the options siteurl, home and
// {prefix}user_roles (WordPress's five default roles) when missing. It is
// idempotent and never changes existing rows.
func EnsureSchema(ctx context.Context, db *gorm.DB, prefix string, opts ...SchemaOption) error {
	if err := ValidatePrefix(prefix); err != nil {
		return err
	}
	cfg := schemaConfig{siteURL: "http://localhost"}
	for _, o := range opts {
		o(&cfg)
	}
	db = db.WithContext(ctx)
	ddl := sqliteSchema
	if isMySQL(db) {
		ddl = mysqlSchema
	}
	create := func(conn *gorm.DB) error {
		for _, stmt := range strings.Split(fmt.Sprintf(ddl, prefix), ";\n") {
			if err := conn.Exec(stmt).Error; err != nil {
				return fmt.Errorf("create WordPress tables: %w", err)
			}
		}
		return nil
	}
	var err error
	if isMySQL(db) {
		err = db.Connection(func(conn *gorm.DB) error {
			return withWordPressSQLMode(conn, create)
		})
	} else {
		err = create(db)
	}
	if err != nil {
		return err
	}
	return db.Transaction(func(tx *gorm.DB) error {
		for _, o := range []struct{ name, value string }{
			{"siteurl", cfg.siteURL},
			{"home", cfg.siteURL},
			{prefix + "user_roles", defaultUserRoles},
		} {
			if _, err := addOption(tx, prefix, o.name, o.value); err != nil {
				return err
			}
		}
		return nil
	})
}

// withWordPressSQLMode runs fn on conn (one connection) with the SQL modes
// WordPress disables turned off, then restores the session's modes.
func withWordPressSQLMode(conn *gorm.DB, fn func(*gorm.DB) error) error {
	var modes string
	if err := conn.Raw("SELECT @@SESSION.sql_mode").Row().Scan(&modes); err != nil {
		return fmt.Errorf("read sql_mode: %w", err)
	}
	var keep []string
	for _, m := range strings.Split(modes, ",") {
		if m != "" && !wpIncompatibleModes[strings.ToUpper(m)] {
			keep = append(keep, m)
		}
	}
	if err := conn.Exec("SET SESSION sql_mode = ?", strings.Join(keep, ",")).Error; err != nil {
		return fmt.Errorf("set sql_mode: %w", err)
	}
	ferr := fn(conn)
	if err := conn.Exec("SET SESSION sql_mode = ?", modes).Error; err != nil && ferr == nil {
		return fmt.Errorf("restore sql_mode: %w", err)
	}
	return ferr
}

// readOption reads an option row inside tx.
func readOption(tx *gorm.DB, prefix, name string) (string, bool, error) {
	src := &GormSource{db: tx, prefix: prefix}
	return src.Option(tx.Statement.Context, name)
}

// addOption is add_option() with autoload "yes": it inserts the row when no
// row of that name exists and reports whether it did.
func addOption(tx *gorm.DB, prefix, name, value string) (bool, error) {
	_, found, err := readOption(tx, prefix, name)
	if err != nil || found {
		return false, err
	}
	if err := tx.Exec("INSERT INTO "+prefix+"options (option_name, option_value, autoload) VALUES (?, ?, 'yes')", name, value).Error; err != nil {
		return false, fmt.Errorf("add option %s: %w", name, err)
	}
	return true, nil
}

// updateOption is update_option(): it sets the value, adding the row when
// it is missing.
func updateOption(tx *gorm.DB, prefix, name, value string) error {
	added, err := addOption(tx, prefix, name, value)
	if err != nil || added {
		return err
	}
	if err := tx.Exec("UPDATE "+prefix+"options SET option_value = ? WHERE option_name = ?", value, name).Error; err != nil {
		return fmt.Errorf("update option %s: %w", name, err)
	}
	return nil
}

var (
	titleDisallowed = regexp.MustCompile(`[^%a-z0-9 _-]`)
	dashRuns        = regexp.MustCompile(`-+`)
	levelCap        = regexp.MustCompile(`(?i)^level_(10|[0-9])$`)
)

// strictUserLogin matches what sanitize_user($login, true) leaves intact.
var strictUserLogin = regexp.MustCompile(`^[A-Za-z0-9 _.\-@]+$`)

// SanitizeTitle is sanitize_title() ('save' context) for the ASCII strings
// a strict user login can contain: lower-cased, "." to "-", other
// punctuation removed, whitespace runs to "-", dashes collapsed and
// trimmed. It gives user_nicename.
func SanitizeTitle(s string) string {
	s = strings.ToLower(stripTags(s))
	s = entities.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, ".", "-")
	s = titleDisallowed.ReplaceAllString(s, "")
	s = whitespace.ReplaceAllString(s, "-")
	s = dashRuns.ReplaceAllString(s, "-")
	return strings.Trim(s, "-")
}

// roleLevel is update_user_level_from_caps() for a user holding only role:
// the highest level_N key among the role's capabilities (truthy or not).
func roleLevel(roleCaps *Array) int64 {
	level := int64(0)
	re := levelCap
	for i := 0; i < roleCaps.Len(); i++ {
		k, _ := roleCaps.At(i)
		if m := re.FindStringSubmatch(keyString(k)); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			level = max(level, n)
		}
	}
	return level
}

// CreateUser inserts a user as wp_insert_user() does for a new user with
// only a login, an email and a role: the users row (nicename from the
// login, display_name = login, user_registered now in UTC) with a random
// password hashed in the phpass portable format (PortableHash), which
// WordPress 6.1 and 6.8+ both verify (nobody knows the password; access is
// by application password), the default per-user meta
// (nickname, first_name, ..., locale) and, as WP_User::set_role() writes
// them, {prefix}capabilities and {prefix}user_level. The role must exist
// in the {prefix}user_roles option. It returns the new user's ID.
func CreateUser(ctx context.Context, db *gorm.DB, prefix, login, email, role string) (int64, error) {
	if err := ValidatePrefix(prefix); err != nil {
		return 0, err
	}
	login = phpTrim(login)
	email = phpTrim(email)
	fields := map[string]string{}
	switch {
	case login == "":
		fields["login"] = "Cannot create a user with an empty login name."
	case !strictUserLogin.MatchString(login) || SanitizeUser(login) != login:
		fields["login"] = "Only letters, digits, spaces and the characters _ . - @ are allowed."
	case len(login) > 60:
		fields["login"] = "Username may not be longer than 60 characters."
	}
	if !IsEmail(email) || len(email) > 100 {
		fields["email"] = "Not a valid email address."
	}
	if role == "" {
		fields["role"] = "A role is required."
	}
	if err := core.Invalid(fields); err != nil {
		return 0, err
	}
	pass, err := randomAlnum(24)
	if err != nil {
		return 0, err
	}
	hash, err := PortableHash(pass)
	if err != nil {
		return 0, err
	}
	var id int64
	err = db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		src := &GormSource{db: tx, prefix: prefix}
		ctx := tx.Statement.Context
		rolesRaw, _, err := src.Option(ctx, prefix+"user_roles")
		if err != nil {
			return err
		}
		roles, _ := MaybeUnserialize(rolesRaw).(*Array)
		def, ok := roles.Get(role)
		if !ok {
			return core.InvalidField("role", fmt.Sprintf("Role %q does not exist.", role))
		}
		var roleCaps *Array
		if d, ok := def.(*Array); ok {
			if c, ok := d.Get("capabilities"); ok {
				roleCaps, _ = c.(*Array)
			}
		}
		if u, err := src.UserByLogin(ctx, login); err != nil {
			return err
		} else if u != nil {
			return core.Errorf(core.ECONFLICT, "Sorry, that username already exists!")
		}
		if u, err := src.UserByEmail(ctx, email); err != nil {
			return err
		} else if u != nil {
			return core.Errorf(core.ECONFLICT, "Sorry, that email address is already used!")
		}
		nicename, err := uniqueNicename(tx, prefix, login)
		if err != nil {
			return err
		}
		registered := time.Now().UTC().Format("2006-01-02 15:04:05")
		if err := tx.Exec("INSERT INTO "+prefix+"users (user_login, user_pass, user_nicename, user_email, user_url, user_registered, user_activation_key, user_status, display_name) VALUES (?, ?, ?, ?, '', ?, '', 0, ?)",
			login, hash, nicename, email, registered, login).Error; err != nil {
			return fmt.Errorf("insert user: %w", err)
		}
		u, err := src.UserByLogin(ctx, login)
		if err != nil {
			return err
		}
		if u == nil {
			return errors.New("insert user: row not found after insert")
		}
		id = u.ID
		caps := NewArray()
		caps.set(role, true)
		capsSer, err := Serialize(caps)
		if err != nil {
			return err
		}
		for _, m := range []struct{ key, value string }{
			{"nickname", login},
			{"first_name", ""},
			{"last_name", ""},
			{"description", ""},
			{"rich_editing", "true"},
			{"syntax_highlighting", "true"},
			{"comment_shortcuts", "false"},
			{"admin_color", "fresh"},
			{"use_ssl", "0"},
			{"show_admin_bar_front", "true"},
			{"locale", ""},
			{prefix + "capabilities", capsSer},
			{prefix + "user_level", strconv.FormatInt(roleLevel(roleCaps), 10)},
		} {
			if err := setUserMeta(tx, prefix, id, m.key, m.value); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return id, nil
}

// uniqueNicename is wp_insert_user()'s user_nicename: sanitize_title of
// the first 50 characters of the login, suffixed "-2", "-3", ... while
// another user has it.
func uniqueNicename(tx *gorm.DB, prefix, login string) (string, error) {
	base := SanitizeTitle(login[:min(len(login), 50)])
	taken := func(n string) (bool, error) {
		var c int64
		err := tx.Raw("SELECT COUNT(*) FROM "+prefix+"users WHERE user_nicename = ? AND user_login != ?", n, login).Row().Scan(&c)
		if err != nil {
			return false, fmt.Errorf("check user_nicename: %w", err)
		}
		return c > 0, nil
	}
	name := base
	for suffix := 2; ; suffix++ {
		t, err := taken(name)
		if err != nil || !t {
			return name, err
		}
		s := strconv.Itoa(suffix)
		name = base[:min(len(base), 49-len(s))] + "-" + s
	}
}

// newUUID4 is wp_generate_uuid4(): a random version-4 UUID, lowercase.
func newUUID4() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// CreateApplicationPassword adds an application password named name to the
// user, as WP_Application_Passwords::create_new_application_password()
// does: 24 random characters [A-Za-z0-9], stored as a phpass portable
// hash (PortableHash, as WordPress 6.1 writes it; 6.8+ verifies it through
// its phpass fallback, whereas 6.1 cannot verify 6.8's $generic$ hashes)
// in the user's _application_passwords meta
// (uuid, app_id "", name, password, created, last_used null, last_ip null),
// and the option using_application_passwords set to true. It returns the
// plain password (shown once; ChunkPassword gives WordPress's display
// form). A user may not have two passwords with the same name.
func CreateApplicationPassword(ctx context.Context, db *gorm.DB, prefix string, userID int64, name string) (string, error) {
	if err := ValidatePrefix(prefix); err != nil {
		return "", err
	}
	name = phpTrim(name)
	if name == "" {
		return "", core.InvalidField("name", "An application name is required to create an application password.")
	}
	pw, err := randomAlnum(24)
	if err != nil {
		return "", err
	}
	hash, err := PortableHash(pw)
	if err != nil {
		return "", err
	}
	uuid, err := newUUID4()
	if err != nil {
		return "", err
	}
	err = db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		src := &GormSource{db: tx, prefix: prefix}
		ctx := tx.Statement.Context
		if u, err := src.UserByID(ctx, userID); err != nil {
			return err
		} else if u == nil {
			return core.Errorf(core.ENOTFOUND, "User %d does not exist.", userID)
		}
		raw, _, err := src.UserMeta(ctx, userID, appPasswordsMetaKey)
		if err != nil {
			return err
		}
		items, ok := MaybeUnserialize(raw).(*Array)
		if !ok {
			items = NewArray()
		}
		for i := 0; i < items.Len(); i++ {
			_, v := items.At(i)
			if it, ok := v.(*Array); ok {
				if n, _ := it.Get("name"); n == name {
					return core.Errorf(core.ECONFLICT, "Each application name should be unique.")
				}
			}
		}
		item := NewArray()
		item.set("uuid", uuid)
		item.set("app_id", "")
		item.set("name", name)
		item.set("password", hash)
		item.set("created", time.Now().Unix())
		item.set("last_used", nil)
		item.set("last_ip", nil)
		items.Append(item)
		ser, err := Serialize(items)
		if err != nil {
			return err
		}
		if err := setUserMeta(tx, prefix, userID, appPasswordsMetaKey, ser); err != nil {
			return err
		}
		inUse, _, err := src.Option(ctx, appPasswordsInUseName)
		if err != nil {
			return err
		}
		if !Truthy(MaybeUnserialize(inUse)) {
			return updateOption(tx, prefix, appPasswordsInUseName, "1")
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return pw, nil
}
