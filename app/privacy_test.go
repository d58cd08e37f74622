package app_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/core"
)

// namingStore is a core.PersonalDataStore over fixed logs.
type namingStore struct{ logs []*core.Log }

func (s namingStore) FindLogsNaming(_ context.Context, _ string, offset, limit int) ([]*core.Log, error) {
	if offset >= len(s.logs) {
		return nil, nil
	}
	return s.logs[offset:min(len(s.logs), offset+limit)], nil
}

func (namingStore) EraseLogsNaming(context.Context, string, string, int) (int, int, error) {
	return 0, 0, nil
}

// perLog is an app.LogItemExporter with one item per log, named by its
// tag, that records the address it was asked about.
type perLog struct {
	tag   string
	asked []string
}

func (p *perLog) ExportLogItems(_ context.Context, logID int64, email string) ([]core.PersonalDataItem, error) {
	p.asked = append(p.asked, email)
	return []core.PersonalDataItem{{ItemID: fmt.Sprintf("%s-%d", p.tag, logID)}}, nil
}

// keeper is an app.PersonalDataKeeper with one item.
type keeper struct{}

func (keeper) ExportPersonalData(context.Context, string) ([]core.PersonalDataItem, error) {
	return []core.PersonalDataItem{{ItemID: "kept"}}, nil
}

func (keeper) ErasePersonalData(context.Context, string) (bool, error) { return false, nil }

// An export gives each log's item, then the items the modules keep per
// log (in their order, asked with the address in lower case), and on the
// first page what the keepers keep after the logs.
func TestExportLogItems(t *testing.T) {
	store := namingStore{logs: []*core.Log{{ID: 1}, {ID: 2}}}
	a, b := &perLog{tag: "a"}, &perLog{tag: "b"}
	p := &app.Privacy{Store: store, LogItems: []app.LogItemExporter{a, b}, Keepers: []app.PersonalDataKeeper{keeper{}}}
	out, err := p.Export(context.Background(), "Bob@Example.com", 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range out.Data {
		got = append(got, it.ItemID)
	}
	want := []string{"mailsvc-log-1", "a-1", "b-1", "mailsvc-log-2", "a-2", "b-2", "kept"}
	if !slices.Equal(got, want) || !out.Done {
		t.Fatalf("exported %v (done %v), want %v", got, out.Done, want)
	}
	if !slices.Equal(a.asked, []string{"bob@example.com", "bob@example.com"}) {
		t.Fatalf("asked for %v", a.asked)
	}
	// Without modules, the logs alone.
	out, err = (&app.Privacy{Store: store}).Export(context.Background(), "bob@example.com", 1)
	if err != nil || len(out.Data) != 2 {
		t.Fatalf("export without modules: %+v, %v", out, err)
	}
}
