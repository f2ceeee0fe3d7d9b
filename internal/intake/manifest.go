package intake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/intake/source"
	"github.com/awr-dev/awr/internal/pathcheck"
)

// Source roles.
const (
	RoleTasks = "tasks"
	RoleGoals = "goals"
	RolePlan  = "plan"
	RoleRules = "rules"
)

// ManifestVersion is the manifest format this awr writes.
const ManifestVersion = 1

// Manifest is .awr/project.toml: the project's name, its sources and,
// optionally, its continuity settings.
type Manifest struct {
	Version int              `toml:"version" json:"version"`
	Name    string           `toml:"name" json:"name"`
	Sources []ManifestSource `toml:"sources" json:"sources"`
	// Continuity is the optional [continuity] table; nil when absent.
	Continuity *Continuity `toml:"continuity,omitempty" json:"continuity,omitempty"`
	// Store is the optional [store] table: the log in a shared database;
	// nil for the embedded SQLite file.
	Store *StoreTable `toml:"store,omitempty" json:"store,omitempty"`
}

// Continuity is the manifest's [continuity] table: how long a claim's
// lease lasts and how many open loops a checkpoint carries. A key that is
// absent takes its default (see Manifest.Policy).
type Continuity struct {
	// ClaimTTLms is the lease of a claim taken without --ttl-ms, in
	// milliseconds; 0 means claims never expire (the only way a claim
	// without expiry can exist). Nil is commands.DefaultClaimTTLms.
	ClaimTTLms *int64 `toml:"claim_ttl_ms,omitempty" json:"claim_ttl_ms,omitempty"`
	// OpenLoopCap bounds the open loops carried forward (at least 1); nil
	// is commands.DefaultOpenLoopCap.
	OpenLoopCap *int `toml:"open_loop_cap,omitempty" json:"open_loop_cap,omitempty"`
	// EvidenceLevel is the weakest evidence (observed, reported or note)
	// that carries an acceptance criterion to `awr work complete`; nil is
	// commands.DefaultEvidenceLevel (reported).
	EvidenceLevel *string `toml:"evidence_level,omitempty" json:"evidence_level,omitempty"`
}

// Policy returns the continuity policy the manifest sets: each
// [continuity] key it names, commands.DefaultPolicy for the others (and
// for a nil manifest).
func (m *Manifest) Policy() commands.Policy {
	p := commands.DefaultPolicy()
	if m == nil || m.Continuity == nil {
		return p
	}
	if c := m.Continuity; c.ClaimTTLms != nil {
		p.ClaimTTLms = *c.ClaimTTLms
	}
	if c := m.Continuity; c.OpenLoopCap != nil {
		p.OpenLoopCap = *c.OpenLoopCap
	}
	if c := m.Continuity; c.EvidenceLevel != nil {
		p.EvidenceLevel = *c.EvidenceLevel
	}
	return p
}

// ManifestSource maps one file to an adapter and a role.
type ManifestSource struct {
	Path    string `toml:"path" json:"path"`
	Adapter string `toml:"adapter" json:"adapter"`
	Role    string `toml:"role" json:"role"`
	source.Options
	// Domain is an AWR manifest's source domain: read and kept, not used.
	Domain string `toml:"domain,omitempty" json:"domain,omitempty"`
	// AWROptions is an AWR manifest's [sources.options] table (status_map,
	// field_map); ReadManifest merges it into Options.
	AWROptions *source.Options `toml:"options,omitempty" json:"-"`
}

// mergeAWROptions moves an AWR [sources.options] table into the source's
// own options; a map given both ways is InvalidInput.
func (s *ManifestSource) mergeAWROptions(path string, i int) error {
	o := s.AWROptions
	if o == nil {
		return nil
	}
	s.AWROptions = nil
	if (len(o.StatusMap) > 0 && len(s.StatusMap) > 0) || (len(o.FieldMap) > 0 && len(s.FieldMap) > 0) {
		return fault.New(fault.InvalidInput, "manifest %s: sources[%d] (%s) gives status_map or field_map both in the source and in [sources.options]", path, i, s.Path).
			With("path", path)
	}
	if len(o.StatusMap) > 0 {
		s.StatusMap = o.StatusMap
	}
	if len(o.FieldMap) > 0 {
		s.FieldMap = o.FieldMap
	}
	return nil
}

// ManifestPath returns the manifest path of the project rooted at dir.
func ManifestPath(dir string) string { return filepath.Join(dir, ".awr", "project.toml") }

// Encode renders the manifest as TOML, sources sorted by path.
func (m *Manifest) Encode() ([]byte, error) {
	cp := *m
	cp.Sources = append([]ManifestSource(nil), m.Sources...)
	sort.Slice(cp.Sources, func(i, j int) bool { return cp.Sources[i].Path < cp.Sources[j].Path })
	var buf bytes.Buffer
	buf.WriteString("# awr project manifest: which of the team's files awr indexes, and how.\n")
	buf.WriteString("# The files stay authoritative; awr only reads them. Edit, then: awr source reindex\n")
	if err := toml.NewEncoder(&buf).Encode(cp); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Equal reports whether two manifests say the same thing.
func (m *Manifest) Equal(o *Manifest) bool {
	a, err1 := m.Encode()
	b, err2 := o.Encode()
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}

// Validate checks the manifest's fields; errors name the source by index
// and path.
func (m *Manifest) Validate(path string) error {
	if strings.TrimSpace(m.Name) == "" {
		return fault.New(fault.InvalidInput, "manifest %s: name is empty", path).With("path", path)
	}
	if m.Version < 0 || m.Version > ManifestVersion { // 0: written without a version, read as the current one
		return fault.New(fault.InvalidInput, "manifest %s: version = %d, and this awr reads version %d manifests", path, m.Version, ManifestVersion).
			With("path", path).With("key", "version").With("version", m.Version)
	}
	if err := validUTF8(path, m); err != nil {
		return err
	}
	if c := m.Continuity; c != nil {
		if c.ClaimTTLms != nil && *c.ClaimTTLms < 0 {
			return fault.New(fault.InvalidInput, "manifest %s: continuity.claim_ttl_ms = %d is negative (milliseconds; 0 means claims never expire)", path, *c.ClaimTTLms).
				With("path", path).With("key", "continuity.claim_ttl_ms")
		}
		if c.ClaimTTLms != nil && *c.ClaimTTLms > commands.MaxTTLms {
			return fault.New(fault.InvalidInput, "manifest %s: continuity.claim_ttl_ms = %d is longer than the longest lease, %d (30 days)", path, *c.ClaimTTLms, commands.MaxTTLms).
				With("path", path).With("key", "continuity.claim_ttl_ms").With("max", commands.MaxTTLms)
		}
		if l := c.EvidenceLevel; l != nil && *l != events.LevelObserved && *l != events.LevelReported && *l != events.LevelNote {
			return fault.New(fault.InvalidInput, "manifest %s: continuity.evidence_level = %q is not observed, reported or note", path, *l).
				With("path", path).With("key", "continuity.evidence_level")
		}
		if c.OpenLoopCap != nil && *c.OpenLoopCap < 1 {
			return fault.New(fault.InvalidInput, "manifest %s: continuity.open_loop_cap = %d must be at least 1", path, *c.OpenLoopCap).
				With("path", path).With("key", "continuity.open_loop_cap")
		}
	}
	if m.Store != nil {
		if err := CheckStoreURL("manifest "+path+": store.url", m.Store.URL); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for i, s := range m.Sources {
		where := fmt.Sprintf("manifest %s: sources[%d] (%s)", path, i, s.Path)
		switch {
		case s.Path == "" || filepath.IsAbs(s.Path) || strings.HasPrefix(filepath.Clean(s.Path), ".."):
			return fault.New(fault.InvalidInput, "%s: path must be relative to the project", where).With("path", path)
		case source.Parsers[s.Adapter] == nil:
			return fault.New(fault.InvalidInput, "%s: unknown adapter %q (known: %s)", where, s.Adapter, strings.Join(source.Adapters(), ", ")).With("path", path)
		case s.Role != RoleTasks && s.Role != RoleGoals && s.Role != RolePlan && s.Role != RoleRules:
			return fault.New(fault.InvalidInput, "%s: role %q is not tasks, goals, plan or rules", where, s.Role).With("path", path)
		case seen[s.Path]:
			return fault.New(fault.InvalidInput, "%s: listed twice", where).With("path", path)
		}
		// Fields, and the YAML ledger's section names.
		fields := map[string]bool{"items": true, "goals": true, "rules": true, "milestones": true}
		for _, f := range source.FieldNames() {
			fields[f] = true
		}
		for canon := range s.FieldMap {
			if !fields[canon] {
				return fault.New(fault.InvalidInput, "%s: field_map %q is not a field awr knows (%s)", where, canon, strings.Join(source.FieldNames(), ", ")).With("path", path)
			}
		}
		lowered := map[string]string{}
		for word := range s.StatusMap {
			lw := strings.ToLower(strings.TrimSpace(word))
			if other, dup := lowered[lw]; dup {
				return fault.New(fault.InvalidInput, "%s: status_map maps %q and %q, which differ only in case", where, other, word).With("path", path)
			}
			lowered[lw] = word
		}
		if err := source.CheckKeyPattern(s.KeyPattern); err != nil {
			return fault.New(fault.InvalidInput, "%s: key_pattern %q does not compile: %v", where, s.KeyPattern, err).With("path", path)
		}
		for word, canon := range s.StatusMap {
			if !source.IsCanonical(canon) {
				return fault.New(fault.InvalidInput, "%s: status_map %q = %q: not a canonical status (draft, planned, ready, in_progress, blocked, completed, cancelled)", where, word, canon).With("path", path)
			}
		}
		seen[s.Path] = true
	}
	return nil
}

// validUTF8 refuses text that is not UTF-8: TOML holds only UTF-8, so
// such a manifest could be written but never read back.
func validUTF8(path string, m *Manifest) error {
	bad := func(what string) error {
		return fault.New(fault.InvalidInput, "manifest %s: %s is not valid UTF-8", path, what).With("path", path)
	}
	if !utf8.ValidString(m.Name) {
		return bad("name")
	}
	for i, s := range m.Sources {
		for _, f := range [][2]string{{"path", s.Path}, {"adapter", s.Adapter}, {"role", s.Role}} {
			if !utf8.ValidString(f[1]) {
				return bad(fmt.Sprintf("sources[%d] %s", i, f[0]))
			}
		}
		for k, v := range s.StatusMap {
			if !utf8.ValidString(k) || !utf8.ValidString(v) {
				return bad(fmt.Sprintf("sources[%d] status_map", i))
			}
		}
		for k, v := range s.FieldMap {
			if !utf8.ValidString(k) || !utf8.ValidString(v) {
				return bad(fmt.Sprintf("sources[%d] field_map", i))
			}
		}
	}
	return nil
}

// maxManifestSize bounds .awr/project.toml.
const maxManifestSize = 1 << 20

// ReadManifest reads the project's manifest; ok is false when there is none.
// Errors: InvalidInput naming path:line for TOML that does not parse or
// fields that are wrong.
func ReadManifest(dir string) (m *Manifest, ok bool, err error) {
	path := ManifestPath(dir)
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, false, fault.New(fault.InvalidInput, "manifest %s: not a regular file (%s)", path, fi.Mode().Type()).
			With("path", path).WithHint("awr init --accept")
	}
	raw, err := pathcheck.ReadFile(context.Background(), path, maxManifestSize)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		// No manifest: the directory holds no project (or is not a
		// directory at all); opening its log says so.
		return nil, false, nil
	}
	var pe *pathcheck.Error
	if errors.As(err, &pe) {
		return nil, false, fault.New(fault.InvalidInput, "read manifest %s: %s", path, pe.Why).
			With("path", path).With("rule", string(pe.Rule))
	}
	if err != nil {
		return nil, false, fault.Wrap(fault.Storage, err, "read manifest %s", path)
	}
	m = &Manifest{}
	md, err := toml.Decode(string(raw), m)
	if err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			line := errorLine(raw, perr.Position)
			return nil, false, fault.New(fault.InvalidInput, "manifest %s:%d: %s", path, line, perr.Message).
				With("path", path).With("line", line)
		}
		return nil, false, fault.New(fault.InvalidInput, "manifest %s: %v", path, err).With("path", path)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		return nil, false, fault.New(fault.InvalidInput, "manifest %s: unknown field %s", path, undecoded[0]).With("path", path)
	}
	for i := range m.Sources {
		if err := m.Sources[i].mergeAWROptions(path, i); err != nil {
			return nil, false, err
		}
	}
	if err := m.Validate(path); err != nil {
		return nil, false, err
	}
	return m, true, nil
}

// errorLine is the 1-based line of a TOML parse error, counted from its
// byte offset: the parser's own line number is one short for some errors
// at the end of the input (0 for an unfinished escape on the first line).
func errorLine(raw []byte, pos toml.Position) int {
	line := pos.Line
	if pos.Start > 0 && pos.Start <= len(raw) {
		line = 1 + bytes.Count(raw[:pos.Start], []byte("\n"))
	}
	return max(line, 1)
}

// WriteManifest replaces the project's manifest atomically (a temporary
// file renamed over it). The manifest is awr's own file; the team's files
// are never written.
func WriteManifest(dir string, m *Manifest) error {
	if err := m.Validate(ManifestPath(dir)); err != nil {
		return err
	}
	raw, err := m.Encode()
	if err != nil {
		return fault.Wrap(fault.Internal, err, "encode manifest")
	}
	if err := pathcheck.WriteFile(ManifestPath(dir), raw, 0o644, true); err != nil {
		return fault.Wrap(fault.Storage, err, "write manifest")
	}
	return nil
}

// AddSource maps one more file of the project into the manifest (adapter
// and role chosen as init would, unless given) and returns the new
// manifest source. Errors: InvalidInput for a file that is not readable or
// already listed; NotFound without a manifest.
func AddSource(dir, path, adapter, role string) (*Manifest, ManifestSource, error) {
	m, ok, err := ReadManifest(dir)
	if err != nil {
		return nil, ManifestSource{}, err
	}
	if !ok {
		return nil, ManifestSource{}, fault.New(fault.NotFound, "source add: %s is missing", ManifestPath(dir)).WithHint("awr init")
	}
	inv, err := Discover(dir)
	if err != nil {
		return nil, ManifestSource{}, fault.Wrap(fault.Storage, err, "source add")
	}
	picked, err := chosen("source add", dir, inv, []string{path})
	if err != nil {
		return nil, ManifestSource{}, err
	}
	ms := picked[0]
	if adapter != "" {
		ms.Adapter = adapter
	}
	if role != "" {
		ms.Role = role
	}
	for _, s := range m.Sources {
		if s.Path == ms.Path {
			return nil, ManifestSource{}, fault.New(fault.InvalidInput, "source add: %s is already in the manifest", ms.Path).With("path", ms.Path).WithHint("awr source reindex")
		}
	}
	m.Sources = append(m.Sources, ms)
	if err := m.Validate(ManifestPath(dir)); err != nil {
		return nil, ManifestSource{}, err
	}
	return m, ms, nil
}
