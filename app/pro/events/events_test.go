package events

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/delivery"
	"github.com/mailsvc/mailsvc/core"
)

// finder is a Finder over the events of each log, oldest first.
type finder struct {
	m   map[int64][]LogEvent
	err error
}

func (f finder) FindLogEvents(_ context.Context, id int64) ([]LogEvent, error) { return f.m[id], f.err }

// A log's events naming the address are exported after the log, with
// their ids, labels and detail; those about other recipients are not.
func TestExportLogItems(t *testing.T) {
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	f := finder{m: map[int64][]LogEvent{7: {
		{ID: 1, LogID: 7, Provider: "ses", Event: EventDelivered, At: at, Detail: map[string]any{"recipient": "Bob@example.com"}},
		{ID: 2, LogID: 7, Provider: "ses", Event: EventOpened, At: at, Detail: map[string]any{"recipient": "carol@example.com"}},
	}}}
	p := &PersonalData{Store: f}
	got, err := p.ExportLogItems(context.Background(), 7, "bob@example.com")
	if err != nil {
		t.Fatal(err)
	}
	want := []core.PersonalDataItem{{
		GroupID: "mailsvc-email-events", GroupLabel: "Email delivery events", ItemID: "mailsvc-log-event-1",
		Data: []core.PersonalDatum{
			{Name: "Email log", Value: "mailsvc-log-7"},
			{Name: "Date", Value: "2025-03-01T12:00:00Z"},
			{Name: "Provider", Value: "ses"},
			{Name: "Event", Value: EventDelivered},
			{Name: "Detail", Value: `{"recipient":"Bob@example.com"}`},
		},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ExportLogItems = %+v\nwant %+v", got, want)
	}
	if got, err := p.ExportLogItems(context.Background(), 8, "bob@example.com"); err != nil || len(got) != 0 {
		t.Fatalf("a log without events: %+v, %v", got, err)
	}
	if _, err := (&PersonalData{Store: finder{err: errors.New("down")}}).ExportLogItems(context.Background(), 7, "bob@example.com"); err == nil {
		t.Fatal("a read error was not returned")
	}
}

// The engine is given the last recorded event since the attempt,
// refused when the provider bounced or dropped the message.
func TestLatestEventSince(t *testing.T) {
	since := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		events []LogEvent
		want   delivery.ProviderEvent
		ok     bool
	}{
		{name: "none"},
		{name: "only before the attempt", events: []LogEvent{{Event: EventDelivered, At: since.Add(-time.Second)}}},
		{name: "delivered", events: []LogEvent{{Event: EventDelivered, At: since, Detail: map[string]any{"message_id": "m-1"}}},
			want: delivery.ProviderEvent{Kind: EventDelivered, At: since, MessageID: "m-1"}, ok: true},
		{name: "bounced: refused", events: []LogEvent{{Event: EventBounced, At: since.Add(time.Minute)}},
			want: delivery.ProviderEvent{Kind: EventBounced, At: since.Add(time.Minute), Refused: true}, ok: true},
		{name: "dropped: refused", events: []LogEvent{{Event: EventDropped, At: since.Add(time.Minute)}},
			want: delivery.ProviderEvent{Kind: EventDropped, At: since.Add(time.Minute), Refused: true}, ok: true},
		{name: "the last recorded, not the latest in time",
			events: []LogEvent{{Event: EventOpened, At: since.Add(time.Hour)}, {Event: EventDelivered, At: since.Add(time.Minute)}, {Event: EventClicked, At: since.Add(-time.Hour)}},
			want:   delivery.ProviderEvent{Kind: EventDelivered, At: since.Add(time.Minute)}, ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := &Uncertain{Store: finder{m: map[int64][]LogEvent{1: tt.events}}}
			got, ok, err := u.LatestEventSince(context.Background(), 1, since)
			if err != nil || ok != tt.ok || got != tt.want {
				t.Fatalf("LatestEventSince = %+v, %v, %v; want %+v, %v", got, ok, err, tt.want, tt.ok)
			}
		})
	}
}
