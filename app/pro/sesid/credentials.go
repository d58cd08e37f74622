package sesid

import (
	"context"
	"fmt"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// Credential sources of an SES connection.
const (
	SourceDatabase     = "database"
	SourceWPConfig     = "wp-config"
	SourceEnvironment  = "environment"
	SourceInstanceRole = "instance_role"
)

// Settings keys of an SES connection that carry its API credentials (the
// drivers/ses keys, repeated here because app never imports a driver).
const (
	keyAccessKey      = "access_key"
	keySecret         = "secret"
	keyIMDSRoleSource = "imds_role_source"
)

// CredentialSource is one place an SES connection's API credentials can
// come from.
type CredentialSource struct {
	Source string `json:"source"`
	// Available is true when the source provides the credentials: both
	// keys (database, wp-config, environment), or the instance role
	// switched on.
	Available bool `json:"available"`
	InUse     bool `json:"in_use"`
	// Keys are the credential settings the source provides.
	Keys []string `json:"keys"`
	// Constants name the constants that provide them (wp-config and
	// environment).
	Constants []string `json:"constants"`
	Detail    string   `json:"detail"`
}

// CredentialSources is where an SES connection's credentials can come
// from and which source is used.
type CredentialSources struct {
	ConnectionID int64              `json:"connection_id"`
	InUse        string             `json:"in_use"`
	Sources      []CredentialSource `json:"sources"`
}

// CredentialSources reports, for connection id, which credential sources
// are available (database, wp-config, environment, instance role) and
// which one delivery uses. Constants win over the database, wp-config
// over the environment; the instance role replaces keys when
// imds_role_source is on.
func (s *Service) CredentialSources(ctx context.Context, id int64) (*CredentialSources, error) {
	eff, err := s.connection(ctx, id)
	if err != nil {
		return nil, err
	}
	stored, err := s.Stored.FindConnectionByID(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("ses connection %d: %w", id, err)
	}
	keys := []string{keyAccessKey, keySecret}
	var pins map[string]core.Pin
	if s.Pins != nil {
		pins = s.Pins(Driver, append(keys, keyIMDSRoleSource))
	}
	db := CredentialSource{Source: SourceDatabase, Keys: []string{}, Constants: []string{}}
	wp := CredentialSource{Source: SourceWPConfig, Keys: []string{}, Constants: []string{}}
	env := CredentialSource{Source: SourceEnvironment, Keys: []string{}, Constants: []string{}}
	for _, k := range keys {
		if stored.Settings.String(k) != "" {
			db.Keys = append(db.Keys, k)
		}
		if p, ok := pins[k]; ok && p.Source == core.SourceWPConfig {
			wp.Keys = append(wp.Keys, k)
			wp.Constants = append(wp.Constants, p.Constant)
		}
		for _, name := range core.PinConstants(Driver, k) {
			if v, ok := s.lookupEnv(name); ok && v != "" {
				env.Keys = append(env.Keys, k)
				env.Constants = append(env.Constants, name)
				break
			}
		}
	}
	for _, src := range []*CredentialSource{&db, &wp, &env} {
		src.Available = len(src.Keys) == len(keys)
	}
	db.Detail = "The access key and secret stored with the connection (encrypted)."
	wp.Detail = "Constants defined in wp-config.php (MAILSVC_AWS_SES_ACCESS_KEY_ID, MAILSVC_AWS_SES_SECRET_KEY or their aliases)."
	env.Detail = "The same constants as environment variables of the service."
	role := CredentialSource{Source: SourceInstanceRole, Keys: []string{}, Constants: []string{},
		Available: imdsRoleSource(eff.Settings)}
	if p, ok := pins[keyIMDSRoleSource]; ok {
		role.Constants = append(role.Constants, p.Constant)
	}
	if role.Available {
		role.Detail = "Temporary credentials of the EC2 instance's IAM role, read through IMDSv2 (imds_role_source is on)."
	} else {
		role.Detail = "Off: define MAILSVC_AWS_ENABLE_IMDS_ROLE_SOURCE as true (in wp-config.php or the environment) on an EC2 instance with an IAM role allowed to use SES; the API cannot switch it on."
	}

	out := &CredentialSources{ConnectionID: id}
	switch p, pinned := pins[keyAccessKey]; {
	case role.Available:
		out.InUse = SourceInstanceRole
	case pinned && p.Source == core.SourceWPConfig:
		out.InUse = SourceWPConfig
	case pinned && p.Source == core.SourceEnvironment:
		out.InUse = SourceEnvironment
	case eff.Settings.String(keyAccessKey) != "":
		out.InUse = SourceDatabase
	default:
		out.InUse = ""
	}
	for _, src := range []*CredentialSource{&db, &wp, &env, &role} {
		src.InUse = src.Source == out.InUse
		if src.InUse && src.Source != SourceInstanceRole && len(src.Keys) < len(keys) {
			src.Detail += " Only " + strings.Join(src.Keys, " and ") + " comes from here; the rest from a lower source."
		}
	}
	out.Sources = []CredentialSource{db, wp, env, role}
	return out, nil
}

func (s *Service) lookupEnv(name string) (string, bool) {
	if s.LookupEnv == nil {
		return "", false
	}
	return s.LookupEnv(name)
}

// imdsRoleSource reads a connection's imds_role_source, a missing value
// taking the default of the SES driver's field (core.Driver.Field), the
// one place it is written; without the driver linked, off.
func imdsRoleSource(s core.Settings) bool {
	var def bool
	if d, ok := core.LookupDriver(Driver); ok {
		if f := d.Field(keyIMDSRoleSource); f != nil {
			def, _ = f.Default.(bool)
		}
	}
	return s.Bool(keyIMDSRoleSource, def)
}
