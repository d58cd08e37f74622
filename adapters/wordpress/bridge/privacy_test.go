package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// TestBridgePrivacyPages: the bridge's exporter and eraser page as
// WordPress pages them (100 logs a page), keep a queued message, and
// leave rows the Go store reads back: the erased logs decode, name the
// replacement and hold no body.
func TestBridgePrivacyPages(t *testing.T) {
	site, db := bridgedSite(t, "wpv_")
	ctx := context.Background()
	const person = "pat@example.com"
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var logs []*core.Log
	for i := range 101 {
		logs = append(logs, &core.Log{Status: core.StatusDelivered, CreatedAt: base.Add(time.Duration(i) * time.Minute), Message: core.Message{
			From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Name: "Pat", Email: person}}, Cc: []core.Address{{Email: "cc@example.com"}},
			Subject: fmt.Sprintf("Receipt %d for PAT@example.com", i), Text: "Thanks, Pat", HTML: "<p>Thanks</p>",
			Attachments: []core.Attachment{{Filename: "r.pdf", ContentType: "application/pdf", Data: []byte("%PDF")}},
		}})
	}
	if err := db.Logs().ImportLogs(ctx, logs); err != nil {
		t.Fatal(err)
	}
	queued := &core.Log{Message: core.Message{From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Email: person}}, Subject: "Soon", Text: "x"}}
	if err := db.Logs().EnqueueLog(ctx, queued); err != nil {
		t.Fatal(err)
	}

	var pages []struct {
		Data []core.PersonalDataItem `json:"data"`
		Done bool                    `json:"done"`
	}
	out := site.PHP(t, `$pages = array();
foreach ( array( 1, 2 ) as $page ) {
	$pages[] = mailsvc_bridge_privacy_export( 'Pat@Example.com', $page );
}
echo wp_json_encode( $pages );`)
	if err := json.Unmarshal([]byte(out), &pages); err != nil {
		t.Fatalf("export output %q: %v", out, err)
	}
	if len(pages) != 2 || len(pages[0].Data) != 100 || pages[0].Done || len(pages[1].Data) != 2 || !pages[1].Done {
		t.Fatalf("export pages of %d and %d items, done %v and %v; want 100 then 2 (the queued log last) and done",
			len(pages[0].Data), len(pages[1].Data), pages[0].Done, pages[1].Done)
	}
	if last := pages[1].Data[1]; last.ItemID != fmt.Sprintf("mailsvc-log-%d", queued.ID) {
		t.Fatalf("last exported item %+v, want the queued log", last)
	}

	var erases []map[string]any
	out = site.PHP(t, `$answers = array();
for ( $page = 1; $page <= 5; ++$page ) {
	$a = mailsvc_bridge_privacy_erase( 'PAT@example.com', $page );
	$answers[] = $a;
	if ( $a['done'] ) {
		break;
	}
}
echo wp_json_encode( $answers );`)
	if err := json.Unmarshal([]byte(out), &erases); err != nil {
		t.Fatalf("erase output %q: %v", out, err)
	}
	if len(erases) != 2 || erases[0]["done"] != false || erases[0]["items_removed"] != true ||
		erases[1]["done"] != true || erases[1]["items_retained"] != true {
		t.Fatalf("erase answers %v", erases)
	}

	if left, err := db.Privacy().FindLogsNaming(ctx, person, 0, 200); err != nil || !slices.Equal(logIDs(left), []int64{queued.ID}) {
		t.Fatalf("logs naming the person after the erase: %v (%v), want the queued one", logIDs(left), err)
	}
	for _, id := range []int64{logs[0].ID, logs[100].ID} {
		l, err := db.Logs().FindLogByID(ctx, id)
		if err != nil {
			t.Fatalf("the store cannot read erased log %d: %v", id, err)
		}
		js, _ := json.Marshal(l)
		if strings.Contains(strings.ToLower(string(js)), person) || l.Message.Text != "" || l.Message.HTML != "" || len(l.Message.Attachments) != 0 ||
			len(l.Message.To) != 1 || l.Message.To[0] != (core.Address{Email: core.ErasedAddress}) || l.Message.Cc[0].Email != "cc@example.com" ||
			l.Message.Subject != fmt.Sprintf("Receipt %d for %s", id-logs[0].ID, core.ErasedAddress) {
			t.Errorf("erased log %d: %s", id, js)
		}
	}
	if found, _, err := db.Logs().FindLogs(ctx, core.LogFilter{Search: person}); err != nil || !slices.Equal(logIDs(found), []int64{queued.ID}) {
		t.Errorf("search for the person = %v (%v), want the queued log", logIDs(found), err)
	}
	if found, _, err := db.Logs().FindLogs(ctx, core.LogFilter{Search: "cc@example.com"}); err != nil || len(found) != 101 {
		t.Errorf("search for the other recipient found %d logs (%v), want 101", len(found), err)
	}
	// By a part of the address too: only the queued log, which keeps the
	// address in the search's address index; once it is sent and erased,
	// the address leaves the index.
	if found, _, err := db.Logs().FindLogs(ctx, core.LogFilter{Search: "pat@"}); err != nil || !slices.Equal(logIDs(found), []int64{queued.ID}) {
		t.Errorf("search for pat@ = %v (%v), want the queued log", logIDs(found), err)
	}
	if err := db.Gorm().Exec("UPDATE `"+db.TableName("logs")+"` SET status = ? WHERE id = ?", core.StatusDelivered, queued.ID).Error; err != nil {
		t.Fatal(err)
	}
	site.PHP(t, `mailsvc_bridge_privacy_erase( 'pat@example.com', 1 );`)
	var left int64
	if err := db.Gorm().Raw("SELECT COUNT(*) FROM `"+db.TableName("search_addresses")+"` WHERE email = ?", person).Scan(&left).Error; err != nil || left != 0 {
		t.Errorf("the erased address is in the search's address index %d time(s) (%v)", left, err)
	}
	if found, _, err := db.Logs().FindLogs(ctx, core.LogFilter{Search: "pat"}); err != nil || len(found) != 0 {
		t.Errorf("search for pat after the erase = %v (%v), want none", logIDs(found), err)
	}
}

// logIDs returns the logs' ids in order.
func logIDs(logs []*core.Log) []int64 {
	out := make([]int64, 0, len(logs))
	for _, l := range logs {
		out = append(out, l.ID)
	}
	return out
}
