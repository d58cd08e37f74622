package analytics_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/pro/analytics"
	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/core"
)

// fakeStore is an in-memory roll-up, event and log store: events are kept
// with the log they concern, and the queries filter them as the store's do.
type fakeStore struct {
	outcomes []core.OutcomeBucket
	sources  []analytics.SourceBucket
	events   []fakeEvent
	logs     []analytics.ExportedLog // in (CreatedAt, ID) order
	pages    []analytics.LogExportPage
	failAt   int // ExportLogs fails on this call (1-based); 0 never
}

type fakeEvent struct {
	logID    int64
	conn     int64
	source   string
	provider string
	event    string
	at       time.Time
}

func (f *fakeStore) OutcomeBuckets(_ context.Context, from, to time.Time) ([]core.OutcomeBucket, error) {
	var out []core.OutcomeBucket
	for _, b := range f.outcomes {
		if !b.Start.Before(from) && b.Start.Before(to) {
			out = append(out, b)
		}
	}
	return out, nil
}

func (f *fakeStore) SourceBuckets(_ context.Context, from, to time.Time) ([]analytics.SourceBucket, error) {
	var out []analytics.SourceBucket
	for _, b := range f.sources {
		if !b.Start.Before(from) && b.Start.Before(to) {
			out = append(out, b)
		}
	}
	return out, nil
}

func (f *fakeStore) OutcomeTotals(ctx context.Context, from, to time.Time) ([]core.OutcomeBucket, error) {
	bs, _ := f.OutcomeBuckets(ctx, from, to)
	type key struct {
		conn   int64
		status string
	}
	sums := map[key]int64{}
	for _, b := range bs {
		sums[key{b.ConnectionID, b.Status}] += b.Count
	}
	var out []core.OutcomeBucket
	for k, n := range sums {
		out = append(out, core.OutcomeBucket{Start: from, ConnectionID: k.conn, Status: k.status, Count: n})
	}
	return out, nil
}

func (f *fakeStore) SourceTotals(ctx context.Context, from, to time.Time) ([]analytics.SourceBucket, error) {
	bs, _ := f.SourceBuckets(ctx, from, to)
	type key struct{ source, status string }
	sums := map[key]int64{}
	for _, b := range bs {
		sums[key{b.Source, b.Status}] += b.Count
	}
	var out []analytics.SourceBucket
	for k, n := range sums {
		out = append(out, analytics.SourceBucket{Start: from, Source: k.source, Status: k.status, Count: n})
	}
	return out, nil
}

func (f *fakeStore) EventCounts(_ context.Context, from, to time.Time) ([]analytics.EventCount, error) {
	type key struct{ p, e string }
	events := map[key]int64{}
	logs := map[key]map[int64]bool{}
	for _, e := range f.events {
		if e.at.Before(from) || !e.at.Before(to) {
			continue
		}
		k := key{e.provider, e.event}
		events[k]++
		if logs[k] == nil {
			logs[k] = map[int64]bool{}
		}
		logs[k][e.logID] = true
	}
	var out []analytics.EventCount
	for k, n := range events {
		out = append(out, analytics.EventCount{Provider: k.p, Event: k.e, Events: n, Messages: int64(len(logs[k]))})
	}
	return out, nil
}

func (f *fakeStore) LogEventTallies(_ context.Context, from, to time.Time, events []string) ([]analytics.LogEventTally, error) {
	type key struct {
		conn       int64
		source, ev string
	}
	logs := map[key]map[int64]bool{}
	for _, e := range f.events {
		if e.at.Before(from) || !e.at.Before(to) || !slices.Contains(events, e.event) {
			continue
		}
		k := key{e.conn, e.source, e.event}
		if logs[k] == nil {
			logs[k] = map[int64]bool{}
		}
		logs[k][e.logID] = true
	}
	var out []analytics.LogEventTally
	for k, ls := range logs {
		out = append(out, analytics.LogEventTally{ConnectionID: k.conn, Source: k.source, Event: k.ev, Messages: int64(len(ls))})
	}
	return out, nil
}

func (f *fakeStore) ExportLogs(_ context.Context, p analytics.LogExportPage) ([]analytics.ExportedLog, error) {
	f.pages = append(f.pages, p)
	if f.failAt == len(f.pages) {
		return nil, errors.New("connection lost")
	}
	var out []analytics.ExportedLog
	for _, l := range f.logs {
		if l.CreatedAt.Before(p.From) || !l.CreatedAt.Before(p.To) {
			continue
		}
		if p.AfterID > 0 && (l.CreatedAt.Before(p.AfterCreatedAt) || (l.CreatedAt.Equal(p.AfterCreatedAt) && l.ID <= p.AfterID)) {
			continue
		}
		out = append(out, l)
		if len(out) == p.Limit {
			break
		}
	}
	return out, nil
}

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v.UTC()
}

func newService(t *testing.T, st *fakeStore, loc *time.Location, now time.Time, conns ...*core.Connection) *analytics.Service {
	t.Helper()
	cs := apptest.NewConnectionStore()
	for _, c := range conns {
		if err := cs.CreateConnection(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	return &analytics.Service{Rollups: st, Events: st, Logs: st, Connections: cs,
		Location: func(context.Context) (*time.Location, error) { return loc, nil },
		Now:      func() time.Time { return now }}
}

func TestRangeValidation(t *testing.T) {
	loc := time.FixedZone("UTC+5:30", 19800)
	now := at(t, "2024-06-30T10:00:00Z") // 15:30 local
	st := &fakeStore{}
	s := newService(t, st, loc, now)
	tests := []struct {
		name     string
		q        analytics.RangeQuery
		from, to string // RFC 3339, on success
		field    string // the invalid field, on failure
	}{
		{name: "default is the last 30 days", from: "2024-06-01T00:00:00+05:30", to: "2024-07-01T00:00:00+05:30"},
		{name: "days 1 is today", q: analytics.RangeQuery{Days: "1"}, from: "2024-06-30T00:00:00+05:30", to: "2024-07-01T00:00:00+05:30"},
		{name: "days 366", q: analytics.RangeQuery{Days: "366"}, from: "2023-07-01T00:00:00+05:30", to: "2024-07-01T00:00:00+05:30"},
		{name: "dates include the to day", q: analytics.RangeQuery{From: "2024-06-10", To: "2024-06-12"}, from: "2024-06-10T00:00:00+05:30", to: "2024-06-13T00:00:00+05:30"},
		{name: "one date", q: analytics.RangeQuery{From: "2024-06-10", To: "2024-06-10"}, from: "2024-06-10T00:00:00+05:30", to: "2024-06-11T00:00:00+05:30"},
		{name: "from alone runs to today", q: analytics.RangeQuery{From: "2024-06-25"}, from: "2024-06-25T00:00:00+05:30", to: "2024-07-01T00:00:00+05:30"},
		{name: "rfc 3339 times", q: analytics.RangeQuery{From: "2024-06-10T00:00:00Z", To: "2024-06-11T00:00:00Z"}, from: "2024-06-10T05:30:00+05:30", to: "2024-06-11T05:30:00+05:30"},
		{name: "366 days of dates", q: analytics.RangeQuery{From: "2023-07-01", To: "2024-06-30"}, from: "2023-07-01T00:00:00+05:30", to: "2024-07-01T00:00:00+05:30"},
		{name: "367 days", q: analytics.RangeQuery{From: "2023-06-30", To: "2024-06-30"}, field: "to"},
		{name: "reversed", q: analytics.RangeQuery{From: "2024-06-12", To: "2024-06-10"}, field: "to"},
		{name: "empty rfc range", q: analytics.RangeQuery{From: "2024-06-10T00:00:00Z", To: "2024-06-10T00:00:00Z"}, field: "to"},
		{name: "bad from", q: analytics.RangeQuery{From: "yesterday", To: "2024-06-10"}, field: "from"},
		{name: "bad to", q: analytics.RangeQuery{From: "2024-06-10", To: "2024-13-01"}, field: "to"},
		{name: "year 1", q: analytics.RangeQuery{From: "0001-01-01", To: "0001-01-02"}, field: "from"},
		{name: "days 0", q: analytics.RangeQuery{Days: "0"}, field: "days"},
		{name: "days 367", q: analytics.RangeQuery{Days: "367"}, field: "days"},
		{name: "days not a number", q: analytics.RangeQuery{Days: "7d"}, field: "days"},
		{name: "days and dates", q: analytics.RangeQuery{Days: "7", From: "2024-06-10"}, field: "days"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for route, call := range map[string]func() (analytics.Period, error){
				"overview": func() (analytics.Period, error) {
					o, err := s.Overview(context.Background(), tt.q)
					if err != nil {
						return analytics.Period{}, err
					}
					return o.Period, nil
				},
				"deliverability": func() (analytics.Period, error) {
					d, err := s.Deliverability(context.Background(), tt.q)
					if err != nil {
						return analytics.Period{}, err
					}
					return d.Period, nil
				},
				"export": func() (analytics.Period, error) {
					e, err := s.Export(context.Background(), tt.q)
					if err != nil {
						return analytics.Period{}, err
					}
					return e.Period, nil
				},
			} {
				p, err := call()
				if tt.field != "" {
					if core.ErrorCode(err) != core.EINVALID || core.ErrorFields(err)[tt.field] == "" {
						t.Fatalf("%s: error %v (fields %v), want invalid %s", route, err, core.ErrorFields(err), tt.field)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", route, err)
				}
				if got := p.From.Format(time.RFC3339) + " " + p.To.Format(time.RFC3339); got != tt.from+" "+tt.to {
					t.Fatalf("%s: period %s, want %s %s", route, got, tt.from, tt.to)
				}
			}
		})
	}
}

func rate(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

func TestOverview(t *testing.T) {
	now := at(t, "2024-06-30T10:00:00Z")
	// days=2 in UTC: [06-29, 07-01); previous [06-27, 06-29).
	st := &fakeStore{}
	ob := func(ts string, conn int64, status string, n int64) {
		st.outcomes = append(st.outcomes, core.OutcomeBucket{Start: at(t, ts), ConnectionID: conn, Status: status, Count: n})
	}
	sb := func(ts, src, status string, n int64) {
		st.sources = append(st.sources, analytics.SourceBucket{Start: at(t, ts), Source: src, Status: status, Count: n})
	}
	ev := func(logID, conn int64, src, event, ts string) {
		st.events = append(st.events, fakeEvent{logID: logID, conn: conn, source: src, provider: "sendgrid", event: event, at: at(t, ts)})
	}
	// Current period: connection 1 delivers 90 and fails 10; connection
	// 7 (deleted) delivers 100.
	ob("2024-06-29T00:00:00Z", 1, core.StatusDelivered, 90)
	ob("2024-06-30T09:45:00Z", 1, core.StatusFailed, 10)
	ob("2024-06-30T09:45:00Z", 7, core.StatusDelivered, 100)
	sb("2024-06-29T00:00:00Z", "woocommerce", core.StatusDelivered, 150)
	sb("2024-06-30T09:45:00Z", "woocommerce", core.StatusFailed, 10)
	sb("2024-06-30T09:45:00Z", "sendmail", core.StatusDelivered, 40)
	// Previous period: connection 1 delivers 50, all woocommerce.
	ob("2024-06-27T00:00:00Z", 1, core.StatusDelivered, 50)
	sb("2024-06-27T00:00:00Z", "woocommerce", core.StatusDelivered, 50)
	// Before both periods: not counted.
	ob("2024-06-26T23:45:00Z", 1, core.StatusFailed, 1000)
	sb("2024-06-26T23:45:00Z", "woocommerce", core.StatusFailed, 1000)
	// Bounces: two woocommerce messages on connection 1 now (one of them
	// bounced twice), one sendmail complaint; one bounce in the previous
	// period; a delivered event (not a bounce).
	ev(1, 1, "woocommerce", events.EventBounced, "2024-06-29T01:00:00Z")
	ev(1, 1, "woocommerce", events.EventBounced, "2024-06-29T01:01:00Z")
	ev(2, 1, "woocommerce", events.EventBounced, "2024-06-30T01:00:00Z")
	ev(3, 7, "sendmail", events.EventComplained, "2024-06-30T02:00:00Z")
	ev(4, 1, "woocommerce", events.EventBounced, "2024-06-28T02:00:00Z")
	ev(5, 1, "woocommerce", events.EventDelivered, "2024-06-29T02:00:00Z")

	s := newService(t, st, time.UTC, now,
		&core.Connection{Name: "primary", Driver: "sendgrid"}, &core.Connection{Name: "idle", Driver: "smtp"})
	o, err := s.Overview(context.Background(), analytics.RangeQuery{Days: "2"})
	if err != nil {
		t.Fatal(err)
	}
	if o.PreviousPeriod.From.Format(time.DateOnly) != "2024-06-27" || !o.PreviousPeriod.To.Equal(o.Period.From) {
		t.Fatalf("previous period %+v of %+v", o.PreviousPeriod, o.Period)
	}
	tot := o.Totals
	if tot.Current.Sent != 200 || tot.Current.Delivered != 190 || tot.Current.Failed != 10 || tot.Current.Bounced != 2 || tot.Current.Complained != 1 {
		t.Fatalf("current totals %+v", tot.Current)
	}
	if rate(tot.Current.DeliveryRate) != 95 || rate(tot.Current.FailureRate) != 5 || rate(tot.Current.BounceRate) != 1 || rate(tot.Current.ComplaintRate) != 0.5 {
		t.Fatalf("current rates %+v", tot.Current)
	}
	if tot.Previous.Sent != 50 || tot.Previous.Bounced != 1 || rate(tot.Previous.DeliveryRate) != 100 || rate(tot.Previous.BounceRate) != 2 {
		t.Fatalf("previous totals %+v", tot.Previous)
	}
	if tot.Change.Sent != 150 || rate(tot.Change.SentPercent) != 300 || rate(tot.Change.DeliveryRate) != -5 || rate(tot.Change.BounceRate) != -1 || tot.Change.Bounced != 1 {
		t.Fatalf("change %+v", tot.Change)
	}

	type connRow struct {
		id           int64
		name         string
		sent, prev   int64
		bounced      int64
		deliveryRate float64
	}
	var conns []connRow
	for _, c := range o.Connections {
		conns = append(conns, connRow{c.ID, c.Name, c.Current.Sent, c.Previous.Sent, c.Current.Bounced, rate(c.Current.DeliveryRate)})
	}
	wantConns := []connRow{{1, "primary", 100, 50, 2, 90}, {2, "idle", 0, 0, 0, -1}, {7, "", 100, 0, 0, 100}}
	if !slices.Equal(conns, wantConns) {
		t.Fatalf("connections %+v, want %+v", conns, wantConns)
	}
	if o.Connections[2].Change.SentPercent != nil {
		t.Fatalf("a change from nothing has a percentage: %v", *o.Connections[2].Change.SentPercent)
	}

	type srcRow struct {
		src                 string
		sent, failed, prev  int64
		bounced, complained int64
	}
	var srcs []srcRow
	for _, x := range o.Sources {
		srcs = append(srcs, srcRow{x.Source, x.Current.Sent, x.Current.Failed, x.Previous.Sent, x.Current.Bounced, x.Current.Complained})
	}
	wantSrcs := []srcRow{{"woocommerce", 160, 10, 50, 2, 0}, {"sendmail", 40, 0, 0, 0, 1}}
	if !slices.Equal(srcs, wantSrcs) {
		t.Fatalf("sources %+v, want %+v", srcs, wantSrcs)
	}
	if rate(o.Sources[1].Current.ComplaintRate) != 2.5 {
		t.Fatalf("sendmail complaint rate %v, want 2.5", rate(o.Sources[1].Current.ComplaintRate))
	}
}

func TestOverviewEmptyHasNullRates(t *testing.T) {
	s := newService(t, &fakeStore{}, time.UTC, time.Now())
	o, err := s.Overview(context.Background(), analytics.RangeQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Totals.Current.Sent != 0 || o.Totals.Current.DeliveryRate != nil || o.Totals.Change.DeliveryRate != nil || o.Sources == nil || o.Connections == nil {
		t.Fatalf("empty overview %+v", o)
	}
}

func TestDeliverability(t *testing.T) {
	now := at(t, "2024-06-30T10:00:00Z")
	st := &fakeStore{}
	st.outcomes = []core.OutcomeBucket{
		{Start: at(t, "2024-06-30T09:00:00Z"), ConnectionID: 1, Status: core.StatusDelivered, Count: 150},
		{Start: at(t, "2024-06-30T09:00:00Z"), ConnectionID: 3, Status: core.StatusDelivered, Count: 50}, // also sendgrid
		{Start: at(t, "2024-06-30T09:00:00Z"), ConnectionID: 1, Status: core.StatusFailed, Count: 99},    // never accepted
		{Start: at(t, "2024-06-30T09:00:00Z"), ConnectionID: 2, Status: core.StatusDelivered, Count: 10},
	}
	add := func(logID int64, provider, event string, n int) {
		for i := range n {
			st.events = append(st.events, fakeEvent{logID: logID + int64(i), provider: provider, event: event, at: at(t, "2024-06-30T09:30:00Z")})
		}
	}
	add(100, "sendgrid", events.EventDelivered, 190)
	add(100, "sendgrid", events.EventBounced, 4)
	add(100, "sendgrid", events.EventComplained, 1)
	add(100, "sendgrid", events.EventOpened, 50)
	add(100, "sendgrid", events.EventOpened, 10) // the same 10 messages opened again
	add(500, "mailgun", events.EventDelivered, 9)
	st.events = append(st.events, fakeEvent{logID: 1, provider: "postmark", event: events.EventBounced, at: at(t, "2024-06-01T00:00:00Z")}) // out of range
	s := newService(t, st, time.UTC, now,
		&core.Connection{Name: "sg", Driver: "sendgrid"}, &core.Connection{Name: "mg", Driver: "mailgun"}, &core.Connection{Name: "sg2", Driver: "sendgrid"})
	d, err := s.Deliverability(context.Background(), analytics.RangeQuery{Days: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Providers) != 2 || d.Providers[0].Provider != "mailgun" || d.Providers[1].Provider != "sendgrid" {
		t.Fatalf("providers %+v", d.Providers)
	}
	mg, sg := d.Providers[0], d.Providers[1]
	if sg.Accepted != 200 || sg.Delivered != 190 || sg.Bounced != 4 || sg.Complained != 1 || sg.Opened == nil || *sg.Opened != 50 || sg.Clicked != nil {
		t.Fatalf("sendgrid %+v", sg)
	}
	if rate(sg.DeliveredRate) != 95 || rate(sg.BounceRate) != 2 || rate(sg.ComplaintRate) != 0.5 || rate(sg.OpenRate) != 25 || sg.ClickRate != nil {
		t.Fatalf("sendgrid rates %+v", sg)
	}
	if sg.Events[events.EventOpened] != 60 {
		t.Fatalf("sendgrid open events %d, want 60", sg.Events[events.EventOpened])
	}
	if mg.Accepted != 10 || mg.Delivered != 9 || mg.Bounced != 0 || mg.Opened != nil || rate(mg.DeliveredRate) != 90 || rate(mg.BounceRate) != 0 {
		t.Fatalf("mailgun %+v", mg)
	}
}

func TestSafeCell(t *testing.T) {
	tests := []struct{ in, want string }{
		{"=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"},
		{"+1", "'+1"},
		{"-2+3", "'-2+3"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\tx", "'\tx"},
		{"\rx", "'\rx"},
		{"", ""},
		{"plain = text", "plain = text"},
		{"'quoted", "'quoted"},
		{" =space first", " =space first"},
	}
	for _, tt := range tests {
		if got := analytics.SafeCell(tt.in); got != tt.want {
			t.Errorf("SafeCell(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestExportCSV(t *testing.T) {
	loc := time.FixedZone("UTC+2", 7200)
	now := at(t, "2024-06-30T10:00:00Z")
	st := &fakeStore{}
	base := at(t, "2024-06-29T00:00:00Z")
	const n = 1203 // three pages
	for i := range n {
		l := analytics.ExportedLog{ID: int64(i + 1), CreatedAt: base.Add(time.Duration(i/2) * time.Second), Status: core.StatusDelivered,
			ConnectionID: 1, Source: "woocommerce", Recipients: "a@example.com", Subject: fmt.Sprintf("Order %d", i)}
		st.logs = append(st.logs, l)
	}
	tricky := []analytics.ExportedLog{
		{ID: 5000, CreatedAt: base.Add(time.Hour), Status: core.StatusFailed, ConnectionID: 9, Source: "=cmd|' /C calc'!A0",
			Recipients: `"Ann, B" <ann@example.com>, bob@example.com`, Subject: "+SUM(1,2)\nsecond line", LastError: "-550 rejected",
			ProviderMessageID: "@id"},
		{ID: 5001, CreatedAt: base.Add(time.Hour), Status: core.StatusQueued, Subject: "\ttabbed", LastError: "\rcr"},
	}
	st.logs = append(st.logs, tricky...)
	slices.SortFunc(st.logs, func(a, b analytics.ExportedLog) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return int(a.ID - b.ID)
	})
	s := newService(t, st, loc, now, &core.Connection{Name: "primary", Driver: "smtp"})
	e, err := s.Export(context.Background(), analytics.RangeQuery{From: "2024-06-29", To: "2024-06-29"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Filename != "mailsvc-logs-2024-06-29-to-2024-06-29.csv" {
		t.Fatalf("filename %q", e.Filename)
	}
	var buf bytes.Buffer
	if err := e.WriteCSV(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	// The range is the local day: UTC 06-28 22:00 to 06-29 22:00, so
	// every log is in it.
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatalf("the export is not valid CSV: %v", err)
	}
	if !slices.Equal(recs[0], analytics.ExportColumns) {
		t.Fatalf("header %v", recs[0])
	}
	if len(recs) != n+len(tricky)+1 {
		t.Fatalf("%d rows, want %d", len(recs)-1, n+len(tricky))
	}
	seen := map[string]bool{}
	for _, r := range recs[1:] {
		if seen[r[0]] {
			t.Fatalf("log %s exported twice", r[0])
		}
		seen[r[0]] = true
	}
	if len(st.pages) != 3 || st.pages[0].AfterID != 0 || st.pages[1].AfterID == 0 {
		t.Fatalf("pages read: %+v", st.pages)
	}
	for _, p := range st.pages {
		if p.Limit > 500 {
			t.Fatalf("a page of %d logs held at once", p.Limit)
		}
	}
	var got [][]string
	for _, r := range recs[1:] {
		if r[0] == "5000" || r[0] == "5001" {
			got = append(got, r)
		}
	}
	want := [][]string{
		{"5000", "2024-06-29T03:00:00+02:00", "failed", "#9", "'=cmd|' /C calc'!A0", `"Ann, B" <ann@example.com>, bob@example.com`,
			"'+SUM(1,2)\nsecond line", "'-550 rejected", "'@id"},
		{"5001", "2024-06-29T03:00:00+02:00", "queued", "", "", "", "'\ttabbed", "'\rcr", ""},
	}
	if len(got) != 2 || !slices.Equal(got[0], want[0]) {
		t.Fatalf("tricky rows\n%q\nwant\n%q", got, want)
	}
	// The CR in a cell survives only quoted: csv reads "\r" inside quotes
	// as written, so compare without it.
	if got[1][7] != "'\rcr" && got[1][7] != "'\ncr" {
		t.Fatalf("row 5001 last_error %q", got[1][7])
	}
	if !slices.Equal(got[1][:7], want[1][:7]) {
		t.Fatalf("row 5001 %q, want %q", got[1], want[1])
	}
	if !strings.Contains(recs[1][3], "primary") {
		t.Fatalf("connection name not exported: %q", recs[1])
	}
}

func TestExportStopsOnStoreError(t *testing.T) {
	st := &fakeStore{failAt: 2}
	base := at(t, "2024-06-29T00:00:00Z")
	for i := range 700 {
		st.logs = append(st.logs, analytics.ExportedLog{ID: int64(i + 1), CreatedAt: base.Add(time.Duration(i) * time.Second), Status: core.StatusDelivered})
	}
	s := newService(t, st, time.UTC, at(t, "2024-06-30T10:00:00Z"))
	s.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := s.Export(context.Background(), analytics.RangeQuery{Days: "7"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	err = e.WriteCSV(context.Background(), &buf)
	if err == nil || !strings.Contains(err.Error(), "after 500 rows") {
		t.Fatalf("WriteCSV error %v, want the store's error after 500 rows", err)
	}
	if lines := strings.Count(buf.String(), "\n"); lines != 501 {
		t.Fatalf("%d lines written before the error, want the header and the first page", lines)
	}
}

// TestOverviewOfOneSiteListsItsConnections reads one site's overview (a
// site scope): it lists the connections its messages went through, not
// every connection of the network (another site's own among them), which
// the network's overview lists.
func TestOverviewOfOneSiteListsItsConnections(t *testing.T) {
	now := at(t, "2025-06-15T12:00:00Z")
	st := &fakeStore{outcomes: []core.OutcomeBucket{{Start: at(t, "2025-06-14T10:00:00Z"), ConnectionID: 1, Status: core.StatusDelivered, Count: 2}}}
	s := newService(t, st, time.UTC, now, &core.Connection{Name: "network", Driver: "smtp"}, &core.Connection{Name: "site 3's own", Driver: "smtp"})
	ids := func(ctx context.Context) []int64 {
		t.Helper()
		o, err := s.Overview(ctx, analytics.RangeQuery{})
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, c := range o.Connections {
			out = append(out, c.ID)
		}
		return out
	}
	if got := ids(context.Background()); len(got) != 2 {
		t.Fatalf("network overview lists %v", got)
	}
	if got := ids(core.WithSiteScope(context.Background(), 2)); len(got) != 1 || got[0] != 1 {
		t.Fatalf("site 2's overview lists %v", got)
	}
}
