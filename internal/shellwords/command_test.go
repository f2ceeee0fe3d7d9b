package shellwords

import (
	"reflect"
	"testing"
)

func TestCommand(t *testing.T) {
	for in, want := range map[string][]string{
		"":                               nil,
		"awr client hook":                {"awr", "client", "hook"},
		" \tawr\n client  ":              {"awr", "client"},
		`/opt/my\ tools/awr client hook`: {"/opt/my tools/awr", "client", "hook"},
		`'/opt/my tools/awr' client`:     {"/opt/my tools/awr", "client"},
		`'it'\''s' x`:                    {"it's", "x"},
		`"a \"b\" \$c \\ \d" e`:          {`a "b" $c \ \d`, "e"},
		`"C:\tools\awr.exe" client hook`: {`C:\tools\awr.exe`, "client", "hook"},
		"a\\\nb c":                       {"ab", "c"},
		`x ''`:                           {"x", ""},
		`trailing\`:                      {"trailing"},
		`HOME=/tmp "awr" client hook`:    {"HOME=/tmp", "awr", "client", "hook"},
	} {
		if got := command(in, true); !reflect.DeepEqual(got, want) {
			t.Errorf("command(%q) = %q, want %q", in, got, want)
		}
	}
	// Windows: a backslash is an ordinary character.
	for in, want := range map[string][]string{
		`C:\tools\awr.exe client hook`: {`C:\tools\awr.exe`, "client", "hook"},
		`"C:\my tools\awr.exe" client`: {`C:\my tools\awr.exe`, "client"},
		`"C:\my tools\\" x`:            {`C:\my tools\\`, "x"},
	} {
		if got := command(in, false); !reflect.DeepEqual(got, want) {
			t.Errorf("command(%q, no escapes) = %q, want %q", in, got, want)
		}
	}
}
