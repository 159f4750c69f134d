package report

import (
	"slices"
	"strings"
)

// unmeasured is a row for each cell that Cells names and that has no row
// among those judged: its baseline or its configuration was not measured.
func (s Goal) unmeasured(rows []goalVerdict) []goalVerdict {
	var keys []string
	for _, k := range s.GroupBy {
		if len(s.Cells[k]) > 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	config := "—"
	if len(s.Config) > 0 {
		config = displayName(s.Names, s.Config[s.Vary[0]])
	}
	labels := []string{""}
	for _, k := range keys {
		var next []string
		for _, l := range labels {
			for _, v := range s.Cells[k] {
				next = append(next, strings.TrimPrefix(l+", "+k+"="+v, ", "))
			}
		}
		labels = next
	}
	var out []goalVerdict
	for _, label := range labels {
		if slices.ContainsFunc(rows, func(v goalVerdict) bool { return sameCell(v.group, label) }) {
			continue
		}
		v := goalVerdict{group: label, config: config, decision: NotDecided, why: "not measured", unmeasured: true,
			limits: make([]limitVerdict, len(s.Limits))}
		for range s.Context {
			v.context = append(v.context, missing)
		}
		out = append(out, v)
	}
	return out
}

// sameCell reports whether a group's label (every GroupBy parameter) names
// the cell of label (the parameters Cells names): each k=v of the cell is
// among the group's.
func sameCell(group, cell string) bool {
	have := strings.Split(group, ", ")
	for _, kv := range strings.Split(cell, ", ") {
		if !slices.Contains(have, kv) {
			return false
		}
	}
	return true
}
