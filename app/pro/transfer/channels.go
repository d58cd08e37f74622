package transfer

import (
	"context"
	"fmt"
	"sort"

	"github.com/mailsvc/mailsvc/core"
)

// channelSection exports and imports alert channels, with their secrets
// (bot tokens, webhook URLs) left out as connections' are.
type channelSection struct{ svc *Service }

func (channelSection) Name() string { return SectionAlertChannels }

func (c channelSection) sensitive(typ string) func(key string, v any) bool {
	if t, _ := core.LookupChannelType(typ); t != nil {
		return c.svc.sensitive(t.Field)
	}
	return c.svc.sensitive(nil)
}

func (c channelSection) Export(ctx context.Context, st Store) ([]Item, error) {
	chans, err := st.FindNotificationChannels(ctx)
	if err != nil {
		return nil, fmt.Errorf("export alert channels: %w", err)
	}
	out := make([]Item, 0, len(chans))
	for _, ch := range chans {
		settings, omitted := withoutSecrets(ch.Settings, c.sensitive(ch.Type))
		events := append([]string{}, ch.Events...)
		sort.Strings(events)
		out = append(out, Item{
			"id": ch.ID, "name": ch.Name, "type": ch.Type, "is_active": ch.IsActive, "events": events,
			"settings": settings, KeySecretsOmitted: omitted,
		})
	}
	return out, nil
}

func (channelSection) Check(item Item) string {
	if msg := checkCommon(item, "is_active"); msg != "" {
		return msg
	}
	typ, _ := item["type"].(string)
	if typ == "" {
		return "It has no channel type."
	}
	if _, ok := core.LookupChannelType(typ); !ok {
		return fmt.Sprintf("Unknown channel type %q.", typ)
	}
	if v, ok := item["events"]; ok && v != nil {
		list, isList := v.([]any)
		if !isList {
			return "Its events are not a list."
		}
		for _, e := range list {
			if s, _ := e.(string); !knownEvent(s) {
				return fmt.Sprintf("Unknown alert event %v.", e)
			}
		}
	}
	return ""
}

func knownEvent(e string) bool {
	for _, k := range core.AlertEvents {
		if k == e {
			return true
		}
	}
	return false
}

func (c channelSection) Apply(ctx context.Context, tx Store, item Item, existingID int64, name string, _ Refs) (int64, error) {
	typ, _ := item["type"].(string)
	active, ok := item["is_active"].(bool)
	if !ok {
		active = true
	}
	events := []string{}
	if list, ok := item["events"].([]any); ok {
		for _, e := range list {
			events = append(events, e.(string))
		}
	}
	settings := importedSettings(item, c.sensitive(typ))
	ch := &core.NotificationChannel{Name: name, Type: typ, IsActive: active, Events: events, Settings: settings}
	if existingID > 0 {
		chans, err := tx.FindNotificationChannels(ctx)
		if err != nil {
			return 0, fmt.Errorf("replace alert channel %d: %w", existingID, err)
		}
		for _, cur := range chans {
			if cur.ID != existingID {
				continue
			}
			isSecret := c.sensitive(cur.Type)
			for k, v := range cur.Settings {
				if isSecret(k, v) {
					settings[k] = v
				}
			}
			ch.ID, ch.CreatedAt = existingID, cur.CreatedAt
			if err := tx.UpdateNotificationChannel(ctx, ch); err != nil {
				return 0, fmt.Errorf("replace alert channel %d: %w", existingID, err)
			}
			return existingID, nil
		}
		return 0, core.Errorf(core.ENOTFOUND, "Alert channel %d does not exist.", existingID)
	}
	if err := tx.CreateNotificationChannel(ctx, ch); err != nil {
		return 0, fmt.Errorf("import alert channel %q: %w", name, err)
	}
	return ch.ID, nil
}
