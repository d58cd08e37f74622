package core

import "testing"

// TestFreeSettingsSayWhatTheyAre checks that the Settings screen can show
// every free setting in words: in one of SettingGroups, with a label, a
// unit on every number, and a line of help on every key whose label does
// not say it all (all but lists, maps and choices explained beside them).
func TestFreeSettingsSayWhatTheyAre(t *testing.T) {
	groups := map[string]bool{}
	for _, g := range SettingGroups {
		if g.Slug == "" || g.Title == "" || groups[g.Slug] {
			t.Errorf("setting group %+v: empty or repeated", g)
		}
		groups[g.Slug] = true
	}
	used := map[string]bool{}
	for _, d := range FreeSettings {
		t.Run(d.Key, func(t *testing.T) {
			if !groups[d.Group] {
				t.Errorf("group %q is not one of SettingGroups", d.Group)
			}
			used[d.Group] = true
			if d.Label == "" {
				t.Error("no label")
			}
			if d.Type == SettingInt && d.Unit == "" {
				t.Error("a number without a unit")
			}
			if (d.Type == SettingBool || d.Type == SettingInt || d.Type == SettingEmail) && d.Help == "" {
				t.Error("no help")
			}
		})
	}
	for slug := range groups {
		if !used[slug] {
			t.Errorf("group %q holds no setting", slug)
		}
	}
}
