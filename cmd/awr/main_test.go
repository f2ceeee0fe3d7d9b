package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/fixtures/fakeagent"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite cmp goldens inside testdata/script/*.txtar from the actual output")

var runHints = flag.Bool("hints", true, "run every hint a script prints, in a copy of its work directory (hintrun_test.go)")

// TestMain lets the test binary double as the awr command inside scripts.
func TestMain(m *testing.M) {
	testscript.Main(testkit.M(m), map[string]func(){
		"awr":       func() { leaveAtExit = true; os.Exit(runAwrCollectingHints()) },
		"fakeagent": func() { fakeagent.Main(); os.Exit(0) },
	})
}

// TestScripts runs every testdata/script/*.txtar against the real CLI,
// and every hint the scripts print (see hintrun_test.go).
// Slow: the scripts start about 1,200 awr processes, and the hints they print run too.
func TestScripts(t *testing.T) {
	t.Parallel()
	hintRoot := t.TempDir()
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("TZ", "UTC")
			env.Setenv("LANG", "C")
			env.Setenv("COLUMNS", "80")
			env.Setenv("NO_COLOR", "1")
			// A busy project database is waited for as long as a loaded
			// machine may need; no script is about that wait.
			env.Setenv("AWR_TIMEOUT", "60s")
			// Rig scripts run their agents on a private tmux server, gone
			// when the script ends.
			sum := sha256.Sum256([]byte(env.WorkDir))
			socket := "awr-script-" + hex.EncodeToString(sum[:6])
			env.Setenv("AWR_TMUX_SOCKET", socket)
			env.Defer(func() { exec.Command("tmux", "-L", socket, "kill-server").Run() })
			// Each `exec awr` under -race would otherwise sleep 1s at exit.
			if os.Getenv("GORACE") == "" {
				env.Setenv("GORACE", "atexit_sleep_ms=0")
			}
			if *runHints {
				dir := filepath.Join(hintRoot, filepath.Base(env.WorkDir))
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
				env.Setenv(hintsEnv, dir)
				env.Defer(func() { checkHints(env, dir) })
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"jsoncontains": cmdJSONContains,
			"normalize":    cmdNormalize,
			"jsonfield":    cmdJSONField,
			"jsonkeys":     cmdJSONKeys,
			"jsonget":      cmdJSONGet,
			"editline":     cmdEditLine,
			"rehash":       cmdRehash,
			"advance":      cmdAdvance,
		},
	})
}

// cmdAdvance implements `advance DURATION`: awr's clock in the commands
// that follow (AWR_TEST_NOW) is DURATION past the later of the real time
// and the clock the script set before. A lease or an idle time is passed
// this way, not by sleeping: what a script shows then does not depend on
// how fast the machine runs it.
func cmdAdvance(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: advance DURATION")
	}
	d, err := time.ParseDuration(args[0])
	ts.Check(err)
	now := time.Now().UnixMilli()
	if v, err := strconv.ParseInt(ts.Getenv("AWR_TEST_NOW"), 10, 64); err == nil && v > now {
		now = v
	}
	ts.Setenv("AWR_TEST_NOW", strconv.FormatInt(now+d.Milliseconds(), 10))
}

// cmdJSONField implements `jsonfield FILE PATH WANT`: FILE (or stdout,
// stderr) holds exactly one JSON value; the value at PATH, rendered by
// render, must equal WANT. With `!`, the field must be missing or differ.
func cmdJSONField(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: jsonfield FILE PATH WANT")
	}
	got, err := lookup(readJSON(ts, args[0]), args[1])
	if neg {
		if err == nil && render(got) == args[2] {
			ts.Fatalf("%s %s: got %s, want anything else", args[0], args[1], args[2])
		}
		return
	}
	if err != nil {
		ts.Fatalf("%s: %v", args[0], err)
	}
	if r := render(got); r != args[2] {
		ts.Fatalf("%s %s: got %s, want %s", args[0], args[1], r, args[2])
	}
}

// volatile are the parts of an answer that differ from run to run: ids,
// hashes and times.
var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\b[0-9A-HJKMNP-TV-Z]{26}\b`), "ULID"},
	{regexp.MustCompile(`sha256:[0-9a-f]{64}`), "sha256:HASH"},
	{regexp.MustCompile(`\b[0-9a-f]{64}\b`), "HASH"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`), "TIME"},
}

// cmdNormalize implements `normalize FILE OUT`: FILE (or stdout, stderr),
// pretty-printed when it is JSON, with ids, hashes and times replaced by
// placeholders, is written to OUT, for a `cmp OUT GOLDEN` that -update
// can refresh.
func cmdNormalize(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: normalize FILE OUT")
	}
	text := ts.ReadFile(args[0])
	var v any
	if err := json.Unmarshal([]byte(text), &v); err == nil {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		ts.Check(enc.Encode(v))
		text = b.String()
	}
	for _, r := range volatile {
		text = r.re.ReplaceAllString(text, r.with)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(text), 0o644))
}

// cmdJSONContains implements `jsoncontains FILE PATH TEXT`: the string
// at PATH contains TEXT (with `!`, it does not).
func cmdJSONContains(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: jsoncontains FILE PATH TEXT")
	}
	got, err := lookup(readJSON(ts, args[0]), args[1])
	if err != nil {
		ts.Fatalf("%s: %v", args[0], err)
	}
	text, ok := got.(string)
	if !ok {
		ts.Fatalf("%s %s: %s is not a string", args[0], args[1], render(got))
	}
	if strings.Contains(text, args[2]) == neg {
		ts.Fatalf("%s %s: %q, want it %sto contain %q", args[0], args[1], text, map[bool]string{true: "not ", false: ""}[neg], args[2])
	}
}

// cmdJSONKeys implements `jsonkeys FILE PATH KEY...`: the object at PATH
// has exactly these keys (with a `*` segment in PATH, every object it
// reaches does). With `!`, PATH must not resolve to an object.
func cmdJSONKeys(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: jsonkeys FILE PATH KEY...")
	}
	got, err := lookup(readJSON(ts, args[0]), args[1])
	if neg {
		if _, ok := got.(map[string]any); err == nil && ok {
			ts.Fatalf("%s %s: is an object", args[0], args[1])
		}
		return
	}
	if err != nil {
		ts.Fatalf("%s: %v", args[0], err)
	}
	want := append([]string(nil), args[2:]...)
	sort.Strings(want)
	objs := []any{got}
	if strings.Contains(args[1], "*") {
		list, _ := got.([]any)
		if len(list) == 0 {
			ts.Fatalf("%s %s: matches nothing", args[0], args[1])
		}
		objs = list
	}
	for i, o := range objs {
		m, ok := o.(map[string]any)
		if !ok {
			ts.Fatalf("%s %s[%d]: %s is not an object", args[0], args[1], i, render(o))
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if strings.Join(keys, " ") != strings.Join(want, " ") {
			ts.Fatalf("%s %s[%d]: keys %v, want %v", args[0], args[1], i, keys, want)
		}
	}
}

// cmdJSONGet implements `jsonget VAR FILE PATH`: sets $VAR to the value at
// PATH, rendered by render.
func cmdJSONGet(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! jsonget")
	}
	if len(args) != 3 {
		ts.Fatalf("usage: jsonget VAR FILE PATH")
	}
	got, err := lookup(readJSON(ts, args[1]), args[2])
	if err != nil {
		ts.Fatalf("%s: %v", args[1], err)
	}
	ts.Setenv(args[0], render(got))
}

// cmdEditLine implements `editline FILE LINE OLD NEW`: replaces the first
// OLD in line LINE (1-based) of FILE with NEW; OLD must occur there.
func cmdEditLine(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! editline")
	}
	if len(args) != 4 {
		ts.Fatalf("usage: editline FILE LINE OLD NEW")
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n < 1 {
		ts.Fatalf("editline: bad line number %q", args[1])
	}
	file := ts.MkAbs(args[0])
	data, err := os.ReadFile(file)
	ts.Check(err)
	lines := strings.SplitAfter(string(data), "\n")
	if n > len(lines) || !strings.Contains(lines[n-1], args[2]) {
		ts.Fatalf("editline: %q not found on line %d of %s", args[2], n, args[0])
	}
	lines[n-1] = strings.Replace(lines[n-1], args[2], args[3], 1)
	ts.Check(os.WriteFile(file, []byte(strings.Join(lines, "")), 0o644))
}

// readJSON decodes FILE, which must hold exactly one JSON value (the --json
// contract: one object on stdout, one on stderr for errors).
func readJSON(ts *testscript.TestScript, file string) any {
	dec := json.NewDecoder(strings.NewReader(ts.ReadFile(file)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		ts.Fatalf("%s: not JSON: %v", file, err)
	}
	var extra any
	if err := dec.Decode(&extra); err == nil {
		ts.Fatalf("%s: holds more than one JSON value", file)
	}
	return v
}

// lookup follows a dot-separated path: object keys, array indexes, `@len`
// for the length of an array or object, and `*` to map the rest of the path
// over every element of an array. "." is the whole value.
func lookup(v any, path string) (any, error) {
	if path == "." || path == "" {
		return v, nil
	}
	segs := strings.Split(strings.TrimPrefix(path, "."), ".")
	return walk(v, segs, path)
}

func walk(v any, segs []string, path string) (any, error) {
	for i, seg := range segs {
		switch x := v.(type) {
		case map[string]any:
			if seg == "@len" {
				v = json.Number(strconv.Itoa(len(x)))
				continue
			}
			next, ok := x[seg]
			if !ok {
				return nil, fmt.Errorf("%s: no field %q", path, seg)
			}
			v = next
		case []any:
			switch seg {
			case "@len":
				v = json.Number(strconv.Itoa(len(x)))
			case "*":
				out := make([]any, 0, len(x))
				for _, el := range x {
					r, err := walk(el, segs[i+1:], path)
					if err != nil {
						return nil, err
					}
					out = append(out, r)
				}
				return out, nil
			default:
				idx, err := strconv.Atoi(seg)
				if err != nil || idx < 0 || idx >= len(x) {
					return nil, fmt.Errorf("%s: no index %q in an array of %d", path, seg, len(x))
				}
				v = x[idx]
			}
		default:
			return nil, fmt.Errorf("%s: %q reaches into %s", path, seg, render(v))
		}
	}
	return v, nil
}

// render prints a string as itself and anything else as compact JSON
// (objects with sorted keys).
func render(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
