package shellwords

import (
	"reflect"
	"testing"
)

func TestSplit(t *testing.T) {
	for in, want := range map[string][]string{
		"":                                nil,
		"awr status":                      {"awr", "status"},
		"  awr   ready  ":                 {"awr", "ready"},
		`awr rig send a@r 'WHAT TO SAY'`:  {"awr", "rig", "send", "a@r", "WHAT TO SAY"},
		`awr x --agent "$USER" --n ''`:    {"awr", "x", "--agent", "$USER", "--n", ""},
		`awr x --command 'my-agent {f}'x`: {"awr", "x", "--command", "my-agent {f}x"},
		`awr x "it's"`:                    {"awr", "x", "it's"},
		"awr\tx\n y":                      {"awr", "x", "y"},
		`awr x C:\tools\awr.exe "a\"`:     {"awr", "x", `C:\tools\awr.exe`, `a\`},
	} {
		if got := Split(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Split(%q) = %q, want %q", in, got, want)
		}
	}
}
