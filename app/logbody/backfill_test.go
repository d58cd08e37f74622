package logbody_test

import (
	"context"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/logbody"
	"github.com/mailsvc/mailsvc/core"
)

// TestBackfill runs `mailsvc logs redact`'s walk over logs stored whole:
// batches by id up to the last id at the start, queued logs left alone,
// a second run reading nothing, a run resumed after an id, and --all
// moving logs to a stricter mode only.
func TestBackfill(t *testing.T) {
	ctx := context.Background()
	store := apptest.NewLogStore()
	var ids []int64
	add := func(status, source, text string) {
		l := &core.Log{Status: status, Source: source, CreatedAt: time.Now().UTC(),
			Message: core.Message{From: core.Address{Email: "a@example.com"}, To: []core.Address{{Email: "b@example.com"}}, Subject: "s", Text: text}}
		if err := store.ImportLogs(ctx, []*core.Log{l}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, l.ID)
	}
	for i := 0; i < 6; i++ {
		add(core.StatusDelivered, "wp_mail", resetMail)
	}
	add(core.StatusFailed, "my-plugin", resetMail)
	queued := &core.Log{Source: "wp_mail", Message: core.Message{Text: resetMail}}
	if err := store.EnqueueLog(ctx, queued); err != nil {
		t.Fatal(err)
	}
	policy := logbody.Policy{Sources: map[string]string{"my-plugin": core.LogBodyFull}}
	var steps []int64
	b := &logbody.Backfill{Store: store, Policy: policy, Batch: 3}
	p, err := b.Run(ctx, 0, func(p logbody.BackfillProgress) { steps = append(steps, p.LastID) })
	if err != nil {
		t.Fatal(err)
	}
	if p.Read != 7 || p.Rewritten != 7 || p.Redacted != 6 || p.UpTo != queued.ID || len(steps) != 3 || steps[0] != ids[2] || steps[2] != queued.ID {
		t.Fatalf("progress %+v, steps %v", p, steps)
	}
	for i, id := range ids {
		l, _ := store.FindLogByID(ctx, id)
		want := resetKept
		if i == 6 {
			want = resetMail
		}
		if l.Message.Text != want || l.BodyMode == "" {
			t.Errorf("log %d: mode %q, text %q", id, l.BodyMode, l.Message.Text)
		}
	}
	if l, _ := store.FindLogByID(ctx, queued.ID); l.Message.Text != resetMail || l.BodyMode != "" {
		t.Errorf("the queued log was rewritten: %+v", l)
	}
	if p, err := b.Run(ctx, 0, nil); err != nil || p.Read != 0 {
		t.Errorf("a second run read %d logs (%v), want none", p.Read, err)
	}

	// --all with none for every source: the full and the redacted logs
	// lose their bodies; resumed after the fourth log, only the rest.
	all := &logbody.Backfill{Store: store, Policy: logbody.Policy{Mode: core.LogBodyNone}, Batch: 2, All: true}
	p, err = all.Run(ctx, ids[3], nil)
	if err != nil || p.Read != 3 || p.Rewritten != 3 {
		t.Fatalf("--all from %d: %+v, %v", ids[3], p, err)
	}
	for i, id := range ids {
		l, _ := store.FindLogByID(ctx, id)
		if wantNone := i > 3; (l.BodyMode == core.LogBodyNone) != wantNone || wantNone && l.Message.Text != "" {
			t.Errorf("log %d after --all: mode %q, text %q", id, l.BodyMode, l.Message.Text)
		}
	}
	// A redacted log never becomes full again.
	full := &logbody.Backfill{Store: store, Policy: logbody.Policy{Mode: core.LogBodyFull}, All: true}
	if p, err := full.Run(ctx, 0, nil); err != nil || p.Rewritten != 0 {
		t.Errorf("--all with full rewrote %d logs (%v)", p.Rewritten, err)
	}
}

type fixedSettings map[string]any

func (f fixedSettings) Get(context.Context) (map[string]any, error) { return f, nil }

// TestKeeperOnImportedLogs applies the settings to logs imported from
// another plugin, as the migration engine does after each chunk.
func TestKeeperOnImportedLogs(t *testing.T) {
	ctx := context.Background()
	store := apptest.NewLogStore()
	logs := []*core.Log{
		{Status: core.StatusDelivered, Source: "import:wpmailsmtp", Message: core.Message{Text: resetMail}},
		{Status: core.StatusFailed, Source: "import:shop", Message: core.Message{Text: resetMail,
			Attachments: []core.Attachment{{Filename: "r.pdf", Data: []byte("pdf")}}}},
	}
	if err := store.ImportLogs(ctx, logs); err != nil {
		t.Fatal(err)
	}
	k := &logbody.Keeper{Store: store, Settings: fixedSettings{"log_body_sources": map[string]any{"import:shop": "none"}}}
	if err := k.KeepBodies(ctx, logs); err != nil {
		t.Fatal(err)
	}
	a, _ := store.FindLogByID(ctx, logs[0].ID)
	b, _ := store.FindLogByID(ctx, logs[1].ID)
	if a.Message.Text != resetKept || a.RedactedCount != 1 || b.Message.Text != "" || b.BodyMode != core.LogBodyNone ||
		b.AttachmentsKept || b.Message.Attachments[0].Size != 3 {
		t.Errorf("kept: %+v\n%+v", a, b)
	}
}
