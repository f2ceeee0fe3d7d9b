package intake_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/intake/source"
)

// manifestDir returns a fresh project directory holding raw as its
// manifest.
func manifestDir(t *testing.T, raw []byte) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Dir(intake.ManifestPath(dir)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(intake.ManifestPath(dir), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// requireRoundTrip writes m with WriteManifest into a fresh project and
// requires ReadManifest to return an equal manifest whose encoding is the
// one written.
func requireRoundTrip(t *testing.T, m *intake.Manifest) {
	t.Helper()
	dir := manifestDir(t, nil)
	if err := intake.WriteManifest(dir, m); err != nil {
		t.Fatalf("write a manifest that validates: %v", err)
	}
	back, ok, err := intake.ReadManifest(dir)
	if err != nil || !ok {
		t.Fatalf("awr refuses the manifest it wrote: ok %v, %v", ok, err)
	}
	if !back.Equal(m) {
		a, _ := m.Encode()
		b, _ := back.Encode()
		t.Fatalf("write → read changed the manifest:\n%s\n---\n%s", a, b)
	}
}

// FuzzReadManifest: any bytes in .awr/project.toml either read as a
// manifest that validates and survives write → read unchanged, or are
// refused with InvalidInput (never another code, never a panic); a TOML
// syntax error names its line.
func FuzzReadManifest(f *testing.F) {
	f.Add([]byte("version = 1\nname = \"demo\"\n\n[[sources]]\npath = \"todo.md\"\nadapter = \"markdown_checklist\"\nrole = \"tasks\"\n"))
	f.Add([]byte("version = 1\nname = \"x\"\n[[sources]]\npath = \"work.yaml\"\nadapter = \"yaml_ledger\"\nrole = \"tasks\"\n[sources.status_map]\n\"En cours\" = \"in_progress\"\n[sources.field_map]\nkey = \"ID\"\n"))
	f.Add([]byte("name = \"x\"\n[[sources]]\npath = \"../up.md\"\n"))
	f.Add([]byte("name = [\n"))
	f.Add([]byte("name = \"x\"\nextra = 1\n"))
	f.Add([]byte("name = \"\\u0000\"\n"))
	f.Add([]byte("version = 1\nname = \"x\"\n[continuity]\nclaim_ttl_ms = 0\nopen_loop_cap = 3\n"))
	f.Add([]byte("name = \"x\"\n[continuity]\nclaim_ttl_ms = -5\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, ok, err := intake.ReadManifest(manifestDir(t, raw))
		if err != nil {
			if ok || m != nil {
				t.Fatalf("an error with a manifest: %v", err)
			}
			var fe *fault.Error
			if !asFault(err, &fe) || fe.Code != fault.InvalidInput {
				t.Fatalf("a bad manifest must be InvalidInput, got %T %v", err, err)
			}
			if line, has := fe.Details["line"]; has {
				if n, _ := line.(int); n < 1 {
					t.Fatalf("syntax error at line %v", line)
				}
			}
			return
		}
		if !ok || m == nil {
			t.Fatal("an existing manifest read as missing")
		}
		if err := m.Validate("fuzz"); err != nil {
			t.Fatalf("ReadManifest returned a manifest that does not validate: %v", err)
		}
		requireRoundTrip(t, m)
	})
}

// FuzzWriteManifest: a manifest built from arbitrary names, paths and
// maps is either refused by WriteManifest with InvalidInput, writing
// nothing, or written so that ReadManifest returns it unchanged.
func FuzzWriteManifest(f *testing.F) {
	f.Add("demo", "todo.md", uint8(0), uint8(0), "doing", "in_progress", "key", "ID")
	f.Add("x", "docs/plan.md", uint8(3), uint8(2), "En cours", "ready", "title", "Titre")
	f.Add(" ", "../x", uint8(9), uint8(9), "", "", "", "")
	f.Add("a\x00b", "a b/\"c\".md", uint8(1), uint8(1), "a.b", "done", "items", "a\nb")
	f.Fuzz(func(t *testing.T, name, path string, adapterIdx, roleIdx uint8, word, canon, field, column string) {
		adapters := source.Adapters()
		roles := []string{intake.RoleTasks, intake.RoleGoals, intake.RolePlan, intake.RoleRules}
		s := intake.ManifestSource{Path: path, Adapter: adapters[int(adapterIdx)%len(adapters)], Role: roles[int(roleIdx)%len(roles)]}
		if adapterIdx >= 128 {
			s.Adapter = word
		}
		if word != "" || canon != "" {
			s.StatusMap = map[string]string{word: canon}
		}
		if field != "" || column != "" {
			s.FieldMap = map[string]string{field: column}
		}
		m := &intake.Manifest{Version: intake.ManifestVersion, Name: name, Sources: []intake.ManifestSource{s}}
		dir := manifestDir(t, nil)
		if err := os.Remove(intake.ManifestPath(dir)); err != nil {
			t.Fatal(err)
		}
		if err := intake.WriteManifest(dir, m); err != nil {
			if !fault.Is(err, fault.InvalidInput) {
				t.Fatalf("a bad manifest must be InvalidInput, got %v", err)
			}
			if _, statErr := os.Stat(intake.ManifestPath(dir)); !os.IsNotExist(statErr) {
				t.Fatalf("a refused manifest was written anyway")
			}
			return
		}
		back, ok, err := intake.ReadManifest(dir)
		if err != nil || !ok {
			raw, _ := os.ReadFile(intake.ManifestPath(dir))
			t.Fatalf("awr refuses the manifest it wrote: ok %v, %v\n%s", ok, err, raw)
		}
		if !back.Equal(m) {
			a, _ := m.Encode()
			b, _ := back.Encode()
			t.Fatalf("write → read changed the manifest:\n%s\n---\n%s", a, b)
		}
	})
}

func asFault(err error, fe **fault.Error) bool {
	if e, ok := err.(*fault.Error); ok {
		*fe = e
		return true
	}
	return false
}
