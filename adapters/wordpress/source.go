package wordpress

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"

	"gorm.io/gorm"
)

// UserRow is the part of a row of the WordPress users table the
// authenticator needs.
type UserRow struct {
	ID          int64
	Login       string
	Pass        string
	Email       string
	DisplayName string
}

// Source reads (and, for application-password usage, writes) the
// WordPress tables of one single site. Lookups that find nothing return
// (nil, nil) or found=false, not an error.
type Source interface {
	OptionReader
	// Prefix is the table prefix ($table_prefix), used for the per-site
	// option "{prefix}user_roles" and user meta "{prefix}capabilities".
	Prefix() string
	// UserByLogin finds a user by user_login with the column's collation
	// (case-insensitive on default MySQL/MariaDB installs).
	UserByLogin(ctx context.Context, login string) (*UserRow, error)
	// UserByEmail finds a user by user_email.
	UserByEmail(ctx context.Context, email string) (*UserRow, error)
	// UserByID finds a user by ID.
	UserByID(ctx context.Context, id int64) (*UserRow, error)
	// UserMeta returns the first (lowest umeta_id) raw meta_value of key.
	UserMeta(ctx context.Context, userID int64, key string) (value string, found bool, err error)
	// SetUserMeta is update_user_meta(): it replaces the value of every row
	// with that key, or adds a row when there is none.
	SetUserMeta(ctx context.Context, userID int64, key, value string) error
}

// validPrefix is WordPress's rule for $table_prefix (wpdb::set_prefix).
var validPrefix = regexp.MustCompile(`^[A-Za-z0-9_]*$`)

// ValidatePrefix returns an error unless prefix is a valid WordPress table
// prefix; it is interpolated into SQL, so nothing else may pass.
func ValidatePrefix(prefix string) error {
	if !validPrefix.MatchString(prefix) {
		return fmt.Errorf("invalid WordPress table prefix %q: only letters, digits and underscores are allowed", prefix)
	}
	return nil
}

// GormSource is the Source over a gorm connection to the WordPress
// database (MySQL/MariaDB) or a standalone database with the same tables
// (SQLite or MySQL/MariaDB).
type GormSource struct {
	db     *gorm.DB
	prefix string
}

// NewGormSource returns a Source reading {prefix}users, {prefix}usermeta
// and {prefix}options through db. It fails on an invalid prefix.
func NewGormSource(db *gorm.DB, prefix string) (*GormSource, error) {
	if err := ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	return &GormSource{db: db, prefix: prefix}, nil
}

// Prefix implements Source.
func (s *GormSource) Prefix() string { return s.prefix }

// Option implements OptionReader: get_option's query, without the
// unserialisation (callers apply MaybeUnserialize).
func (s *GormSource) Option(ctx context.Context, name string) (string, bool, error) {
	return rowValue(s.db.WithContext(ctx),
		"SELECT option_value FROM "+s.prefix+"options WHERE option_name = ? LIMIT 1",
		[]any{name}, "option %q", name)
}

// rowValue runs query with args on db, a query that selects one value
// (an option's, a meta's) of at most one row; false when there is no
// row. An error is wrapped with "read" and what the value is, whatFormat
// formatted with whatArgs.
func rowValue(db *gorm.DB, query string, args []any, whatFormat string, whatArgs ...any) (string, bool, error) {
	var v sql.NullString
	err := db.Raw(query, args...).Row().Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read %s: %w", fmt.Sprintf(whatFormat, whatArgs...), err)
	}
	return v.String, true, nil
}

const userColumns = "ID, user_login, user_pass, user_email, display_name"

func (s *GormSource) userBy(ctx context.Context, column string, value any) (*UserRow, error) {
	var u UserRow
	err := s.db.WithContext(ctx).Raw(
		"SELECT "+userColumns+" FROM "+s.prefix+"users WHERE "+column+" = ? LIMIT 1", value,
	).Row().Scan(&u.ID, &u.Login, &u.Pass, &u.Email, &u.DisplayName)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read user by %s: %w", column, err)
	}
	return &u, nil
}

// UserByLogin implements Source.
func (s *GormSource) UserByLogin(ctx context.Context, login string) (*UserRow, error) {
	return s.userBy(ctx, "user_login", login)
}

// UserByEmail implements Source.
func (s *GormSource) UserByEmail(ctx context.Context, email string) (*UserRow, error) {
	return s.userBy(ctx, "user_email", email)
}

// UserByID implements Source.
func (s *GormSource) UserByID(ctx context.Context, id int64) (*UserRow, error) {
	return s.userBy(ctx, "ID", id)
}

// UserMeta implements Source.
func (s *GormSource) UserMeta(ctx context.Context, userID int64, key string) (string, bool, error) {
	return rowValue(s.db.WithContext(ctx),
		"SELECT meta_value FROM "+s.prefix+"usermeta WHERE user_id = ? AND meta_key = ? ORDER BY umeta_id ASC LIMIT 1",
		[]any{userID, key}, "user meta %q of user %d", key, userID)
}

// SetUserMeta implements Source.
func (s *GormSource) SetUserMeta(ctx context.Context, userID int64, key, value string) error {
	return setUserMeta(s.db.WithContext(ctx), s.prefix, userID, key, value)
}

// setUserMeta is update_user_meta() without a previous-value condition.
func setUserMeta(db *gorm.DB, prefix string, userID int64, key, value string) error {
	res := db.Exec("UPDATE "+prefix+"usermeta SET meta_value = ? WHERE user_id = ? AND meta_key = ?", value, userID, key)
	if res.Error != nil {
		return fmt.Errorf("update user meta %q of user %d: %w", key, userID, res.Error)
	}
	if res.RowsAffected > 0 {
		return nil
	}
	// MySQL reports 0 affected rows when the value is unchanged; only add a
	// row when none exists.
	var n int64
	if err := db.Raw("SELECT COUNT(*) FROM "+prefix+"usermeta WHERE user_id = ? AND meta_key = ?", userID, key).Row().Scan(&n); err != nil {
		return fmt.Errorf("count user meta %q of user %d: %w", key, userID, err)
	}
	if n > 0 {
		return nil
	}
	if err := db.Exec("INSERT INTO "+prefix+"usermeta (user_id, meta_key, meta_value) VALUES (?, ?, ?)", userID, key, value).Error; err != nil {
		return fmt.Errorf("add user meta %q of user %d: %w", key, userID, err)
	}
	return nil
}
