package pro

import (
	"slices"

	"github.com/mailsvc/mailsvc/core"
)

// SettingKeys returns every key of the Pro settings scope.
func SettingKeys() []string {
	keys := make([]string, 0, len(SettingDefs)+len(listKeys))
	for _, d := range SettingDefs {
		keys = append(keys, d.Key)
	}
	return append(keys, listKeys...)
}

// CheckSettings validates Pro settings as Settings.Update does, without
// storing them: it returns the values to store, or an EINVALID error
// naming each bad or unknown key.
func CheckSettings(patch map[string]any) (map[string]any, error) {
	scalars := make(map[string]any, len(patch))
	lists := map[string]any{}
	fields := map[string]string{}
	for k, v := range patch {
		if !slices.Contains(listKeys, k) {
			scalars[k] = v
			continue
		}
		list, msg := checkSlugs(v)
		if msg != "" {
			fields[k] = msg
			continue
		}
		lists[k] = list
	}
	values, err := core.ValidateSettingsPatch(SettingDefs, scalars)
	for k, msg := range core.ErrorFields(err) {
		fields[k] = msg
	}
	if err := core.Invalid(fields); err != nil {
		return nil, err
	}
	for k, v := range lists {
		values[k] = v
	}
	return values, nil
}
