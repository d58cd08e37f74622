package migration

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// unserialize decodes a serialized column with the site's PHP reader,
// or returns s unchanged when it is not serialized.
func unserialize(site Site, s string) any {
	if s == "" {
		return s
	}
	v, err := site.Unserialize(s)
	if err != nil {
		return s
	}
	return v
}

// phpAddressList reads a recipient column: a serialized list of
// {email, name} arrays or of strings, or a comma-separated string.
func phpAddressList(site Site, s string) []core.Address {
	switch v := unserialize(site, s).(type) {
	case string:
		return SplitAddresses(v)
	default:
		return dictAddresses(v)
	}
}

// dictAddresses reads a list of {email, name} arrays or strings.
func dictAddresses(v any) []core.Address {
	var out []core.Address
	switch t := v.(type) {
	case string:
		return SplitAddresses(t)
	case nil:
		return nil
	}
	d := AsDict(v)
	for _, k := range d.Keys() {
		switch item := d[k].(type) {
		case string:
			out = append(out, SplitAddresses(item)...)
		default:
			a := AsDict(item)
			if email := strings.TrimSpace(a.Str("email")); email != "" {
				out = append(out, core.Address{Email: email, Name: a.Str("name")})
			}
		}
	}
	return out
}

// looksHTML guesses whether a body is HTML.
func looksHTML(s string) bool {
	l := strings.ToLower(s)
	return strings.Contains(l, "<html") || strings.Contains(l, "<body") || strings.Contains(l, "<p>") || strings.Contains(l, "<br") || strings.Contains(l, "<div")
}

// detect is the common Detect: the option or the log table exists, and
// an active plugin file starts with pluginPrefix.
func detect(ctx context.Context, site Site, option, table, pluginPrefix string) (Detection, error) {
	var d Detection
	_, found, err := site.Option(ctx, option)
	if err != nil && !errors.Is(err, ErrUnreadable) {
		return d, fmt.Errorf("read option %s: %w", option, err)
	}
	d.Found = found || errors.Is(err, ErrUnreadable)
	if !d.Found && table != "" {
		ok, err := site.HasTable(ctx, table)
		if err != nil {
			return d, fmt.Errorf("probe table %s: %w", table, err)
		}
		d.Found = ok
	}
	plugins, err := site.ActivePlugins(ctx)
	if err != nil {
		return d, fmt.Errorf("read active plugins: %w", err)
	}
	for _, p := range plugins {
		if strings.HasPrefix(p, pluginPrefix) {
			d.Active = true
		}
	}
	return d, nil
}
