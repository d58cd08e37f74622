package migration

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// optionDict reads an option that holds a PHP array. found is false when
// the option does not exist; an option that exists but is not an array,
// or cannot be unserialized, is reported in problem (for Setup.Errors)
// with a nil Dict.
func optionDict(ctx context.Context, site Site, name string) (d Dict, found bool, problem string, err error) {
	v, found, err := site.Option(ctx, name)
	if err != nil {
		if isUnreadable(err) {
			return nil, true, fmt.Sprintf("option %s cannot be read: its serialized value is broken", name), nil
		}
		return nil, false, "", fmt.Errorf("read option %s: %w", name, err)
	}
	if !found {
		return nil, false, "", nil
	}
	d = AsDict(v)
	if d == nil {
		if s, ok := v.(string); ok && strings.TrimSpace(s) == "" {
			return nil, true, "", nil
		}
		return nil, true, fmt.Sprintf("option %s is not an array", name), nil
	}
	return d, true, "", nil
}

// isUnreadable reports whether err is Site.Option's ErrUnreadable.
func isUnreadable(err error) bool { return errors.Is(err, ErrUnreadable) }

// readDict is optionDict for a Source's Connections: a problem goes to
// s.Errors, and an error that stops the reading is wrapped with the
// plugin's label ("post smtp").
func (s *Setup) readDict(ctx context.Context, site Site, label, name string) (Dict, bool, error) {
	d, found, problem, err := optionDict(ctx, site, name)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", label, err)
	}
	if problem != "" {
		s.Errors = append(s.Errors, problem)
	}
	return d, found, nil
}
