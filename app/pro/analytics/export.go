package analytics

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// ExportColumns are the export's columns, in order (its header row).
var ExportColumns = []string{"id", "created_at", "status", "connection", "source", "recipients", "subject", "last_error", "provider_message_id"}

// exportPageSize is how many logs the export reads (and holds) at a time.
const exportPageSize = 500

// Export is one validated CSV export of the log, ready to stream.
type Export struct {
	// Period is the range of creation times exported.
	Period Period
	// Filename names the file for the download.
	Filename string

	s     *Service
	loc   *time.Location
	names map[int64]string
}

// Export validates q (a range of at most MaxDays days; the default is the
// last DefaultDays days) and returns the export of the logs created in
// it, to be written with WriteCSV.
func (s *Service) Export(ctx context.Context, q RangeQuery) (*Export, error) {
	p, loc, err := s.resolve(ctx, q)
	if err != nil {
		return nil, err
	}
	if s.Logs == nil {
		return nil, core.Errorf(core.EUNAVAILABLE, "The log export is not available.")
	}
	stored, err := s.connections(ctx)
	if err != nil {
		return nil, err
	}
	names := make(map[int64]string, len(stored))
	for id, c := range stored {
		names[id] = c.Name
	}
	name := fmt.Sprintf("mailsvc-logs-%s-to-%s.csv", p.From.Format(time.DateOnly), p.To.Add(-time.Nanosecond).Format(time.DateOnly))
	return &Export{Period: p, Filename: name, s: s, loc: loc, names: names}, nil
}

// WriteCSV writes the header row and one row per log created in the
// period, oldest first (then by id), reading the log a page at a time and
// flushing after each page (w's Flush, when it has one, runs too). Text
// cells a spreadsheet would take for a formula are neutralised (see
// SafeCell); created_at is RFC 3339 in the site's time zone; connection is
// the name of the connection that sent (else the one asked for), "#id"
// for a connection deleted since, "" for none. An error after the first
// row leaves the file incomplete; it is logged and returned.
func (e *Export) WriteCSV(ctx context.Context, w io.Writer) error {
	cw := csv.NewWriter(w)
	flush := func() error {
		cw.Flush()
		if err := cw.Error(); err != nil {
			return fmt.Errorf("write export: %w", err)
		}
		if f, ok := w.(interface{ Flush() }); ok {
			f.Flush()
		}
		return nil
	}
	if err := cw.Write(ExportColumns); err != nil {
		return fmt.Errorf("write export: %w", err)
	}
	page := LogExportPage{From: e.Period.From.UTC(), To: e.Period.To.UTC(), Limit: exportPageSize}
	rows := 0
	for {
		logs, err := e.s.Logs.ExportLogs(ctx, page)
		if err != nil {
			err = fmt.Errorf("export logs after %d rows: %w", rows, err)
			e.s.logger().Error("log export stopped", "err", err)
			return err
		}
		for i := range logs {
			if err := cw.Write(e.record(&logs[i])); err != nil {
				return fmt.Errorf("write export: %w", err)
			}
		}
		rows += len(logs)
		if err := flush(); err != nil {
			return err
		}
		if len(logs) < page.Limit {
			return nil
		}
		last := logs[len(logs)-1]
		page.AfterCreatedAt, page.AfterID = last.CreatedAt, last.ID
	}
}

// record returns the CSV cells of l.
func (e *Export) record(l *ExportedLog) []string {
	conn := ""
	if l.ConnectionID != 0 {
		var ok bool
		if conn, ok = e.names[l.ConnectionID]; !ok {
			conn = "#" + strconv.FormatInt(l.ConnectionID, 10)
		}
	}
	return []string{
		strconv.FormatInt(l.ID, 10),
		l.CreatedAt.In(e.loc).Format(time.RFC3339),
		SafeCell(l.Status),
		SafeCell(conn),
		SafeCell(l.Source),
		SafeCell(l.Recipients),
		SafeCell(l.Subject),
		SafeCell(l.LastError),
		SafeCell(l.ProviderMessageID),
	}
}

// SafeCell neutralises a text cell a spreadsheet would run as a formula
// (CSV injection): a cell starting with =, +, -, @, a tab or a carriage
// return gets a single quote in front, which spreadsheets show as text.
// Quoting of commas, quotes and line breaks is the CSV writer's job.
func SafeCell(v string) string {
	if v == "" {
		return v
	}
	switch v[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + v
	}
	return v
}
