package wordpress

import (
	"context"
	"fmt"
)

// LogRedactPatternsOption is the option in which the bridge publishes the
// site's mail_svc_log_redact_patterns filter: the list of patterns the
// filter returns.
const LogRedactPatternsOption = "mailsvc_log_redact_patterns"

// LogRedactPatterns reads the site's log redaction patterns as the bridge
// publishes them: the Go side of the PHP filter mail_svc_log_redact_patterns
// (see app/logbody). No option (no filter, or the bridge has not run
// since one was added) gives none.
type LogRedactPatterns struct {
	Options OptionReader
}

// Patterns returns the published patterns, the strings of the option's
// list in order.
func (p *LogRedactPatterns) Patterns(ctx context.Context) ([]string, error) {
	raw, found, err := p.Options.Option(ctx, LogRedactPatternsOption)
	if err != nil {
		return nil, fmt.Errorf("read the %s option: %w", LogRedactPatternsOption, err)
	}
	if !found {
		return nil, nil
	}
	arr, ok := MaybeUnserialize(raw).(*Array)
	if !ok {
		return nil, nil
	}
	var out []string
	for i := 0; i < arr.Len(); i++ {
		if _, v := arr.At(i); v != "" {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out, nil
}
