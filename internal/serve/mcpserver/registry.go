package mcpserver

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/lazyre"
)

// The registry of the shared service (`awr-mcp --listen ADDR --registry
// FILE`): the projects it serves, the clients it answers with their
// grants, and the Host and Origin headers it accepts beyond loopback.
//
//	[service]
//	allowed_hosts = ["mcp.example.internal:7424"]
//	allowed_origins = []
//
//	[projects.shop]
//	root = "/srv/awr/shop"
//	id = "01JC7Q..."
//
//	[clients.alice]
//	token_env = "AWR_MCP_TOKEN_ALICE"
//	grants = { shop = "write" }
//
// A token is never written in the file: token_env names the environment
// variable that holds it.

// MinTokenLength is the least number of characters of a client's bearer
// token.
const MinTokenLength = 32

// maxRegistrySize bounds the registry file.
const maxRegistrySize = 1 << 20

// Access is what a client may do on a project: read or write (which
// includes read).
type Access string

// The accesses a grant gives.
const (
	AccessRead  Access = "read"
	AccessWrite Access = "write"
)

// Registry is a parsed and checked registry file.
type Registry struct {
	// Path is the file it was read from (absolute).
	Path string
	// AllowedHosts are the Host header values accepted beyond the
	// loopback names of the listening port, lowercased.
	AllowedHosts []string
	// AllowedOrigins are the Origin header values accepted beyond the
	// loopback origins of the listening port, lowercased.
	AllowedOrigins []string
	// Projects by name.
	Projects map[string]*RegistryProject
	// Clients by name.
	Clients map[string]*RegistryClient
}

// RegistryProject is one project the service serves.
type RegistryProject struct {
	Name string
	// Root is the project directory (absolute; a relative root is taken
	// from the registry file's directory).
	Root string
	// ID is the project id the log must hold (checked at start).
	ID string
	// Line is the line of the project's table in the registry file.
	Line int
}

// RegistryClient is one client: its token and its grants.
type RegistryClient struct {
	Name string
	// TokenEnv is the environment variable the token was read from.
	TokenEnv string
	// tokenSum is the SHA-256 of the token: tokens are compared by their
	// sums, in constant time, so the comparison takes as long whatever
	// the token's length.
	tokenSum [sha256.Size]byte
	// Grants maps a project name to the access given.
	Grants map[string]Access
	// Line is the line of the client's table in the registry file.
	Line int
}

// registryFile is the TOML shape of the file.
type registryFile struct {
	Service struct {
		AllowedHosts   []string `toml:"allowed_hosts"`
		AllowedOrigins []string `toml:"allowed_origins"`
	} `toml:"service"`
	Projects map[string]struct {
		Root string `toml:"root"`
		ID   string `toml:"id"`
	} `toml:"projects"`
	Clients map[string]struct {
		TokenEnv string            `toml:"token_env"`
		Grants   map[string]string `toml:"grants"`
	} `toml:"clients"`
}

// nameRE is what a project or client name may be: it is given in every
// tool call (project) and prefixes the client's conversation keys.
var nameRE = lazyre.New(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// typeErrRE is the decoder's error for a value of the wrong type.
var typeErrRE = lazyre.New(`^toml: line (\d+) \(last key "([^"]+)"\): (.*)$`)

// ReadRegistry reads and checks the registry at path, reading each
// client's token from the environment through getenv (os.Getenv when
// nil). It checks the file alone: that each root holds the project id it
// names is checked when the service starts (NewShared).
// Errors: InvalidInput naming path:line and the field for a file that is
// missing, too large, not TOML, or holds a field that is unknown, missing
// or wrong: a bad name, a relative or empty root, an empty id, a token
// variable unset or shorter than MinTokenLength characters, two clients
// with one token, a grant naming no project or other than read or write,
// a host or origin that is malformed.
func ReadRegistry(path string, getenv func(string) string) (*Registry, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidInput, err, "registry %s", path).With("path", path)
	}
	fi, err := os.Stat(abs)
	switch {
	case err != nil:
		return nil, fault.New(fault.InvalidInput, "registry %s: %v", abs, errors.Unwrap(err)).With("path", abs).With("flag", "--registry")
	case !fi.Mode().IsRegular():
		return nil, fault.New(fault.InvalidInput, "registry %s: not a regular file (%s)", abs, fi.Mode().Type()).With("path", abs).With("flag", "--registry")
	case fi.Size() > maxRegistrySize:
		return nil, fault.New(fault.InvalidInput, "registry %s: %d bytes, more than the %d a registry may hold", abs, fi.Size(), maxRegistrySize).With("path", abs)
	}
	raw, err := os.ReadFile(abs)
	if err != nil {
		return nil, fault.Wrap(fault.Storage, err, "registry %s", abs).With("path", abs)
	}
	if len(raw) > maxRegistrySize {
		return nil, fault.New(fault.InvalidInput, "registry %s: more than the %d bytes a registry may hold", abs, maxRegistrySize).With("path", abs)
	}
	return parseRegistry(abs, raw, getenv)
}

// parseRegistry is ReadRegistry on the file's bytes.
func parseRegistry(path string, raw []byte, getenv func(string) string) (*Registry, error) {
	f, md, err := decodeRegistry(path, raw)
	if err != nil {
		return nil, err
	}
	loc := locator{raw: raw}
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0]
		return nil, regErr(path, loc.key(k[:len(k)-1], k[len(k)-1]), k.String(), "unknown field %s (a registry holds [service] allowed_hosts and allowed_origins, [projects.NAME] root and id, [clients.NAME] token_env and grants)", k)
	}
	reg := &Registry{Path: path, Projects: map[string]*RegistryProject{}, Clients: map[string]*RegistryClient{}}
	for _, step := range []func(*registryFile, locator) error{reg.service, reg.projects, func(f *registryFile, loc locator) error { return reg.clients(f, loc, getenv) }} {
		if err := step(&f, loc); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// decodeRegistry decodes the TOML, naming the line of a syntax error or
// of a value of the wrong type.
func decodeRegistry(path string, raw []byte) (registryFile, toml.MetaData, error) {
	var f registryFile
	md, err := toml.Decode(string(raw), &f)
	if err == nil {
		return f, md, nil
	}
	var perr toml.ParseError
	if errors.As(err, &perr) {
		line := perr.Position.Line
		if perr.Position.Start > 0 && perr.Position.Start <= len(raw) {
			line = 1 + bytes.Count(raw[:perr.Position.Start], []byte("\n"))
		}
		return f, md, regErr(path, max(line, 1), "", "%s", perr.Message)
	}
	// A value of the wrong type: the decoder names its line and key.
	if m := typeErrRE.FindStringSubmatch(err.Error()); m != nil {
		var line int
		fmt.Sscan(m[1], &line)
		return f, md, regErr(path, line, m[2], "%s: %s", m[2], m[3])
	}
	return f, md, regErr(path, 0, "", "%v", err)
}

// service reads [service]: the hosts and origins allowed besides
// loopback's.
func (reg *Registry) service(f *registryFile, loc locator) error {
	path := reg.Path
	for i, h := range f.Service.AllowedHosts {
		if _, port, err := net.SplitHostPort(h); err != nil || port == "" || strings.ContainsAny(h, "/@ ") {
			return regErr(path, loc.key([]string{"service"}, "allowed_hosts"), "service.allowed_hosts", "allowed_hosts[%d] %q is not HOST:PORT, as a request's Host header names the service", i, h)
		}
		reg.AllowedHosts = append(reg.AllowedHosts, strings.ToLower(h))
	}
	for i, o := range f.Service.AllowedOrigins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
			return regErr(path, loc.key([]string{"service"}, "allowed_origins"), "service.allowed_origins", "allowed_origins[%d] %q is not an origin (SCHEME://HOST[:PORT], http or https, nothing after)", i, o)
		}
		reg.AllowedOrigins = append(reg.AllowedOrigins, strings.ToLower(o))
	}
	return nil
}

// projects reads each [projects.NAME]: its root (relative to the
// registry's directory) and id; a registry without a project or without a
// client is refused first.
func (reg *Registry) projects(f *registryFile, loc locator) error {
	path := reg.Path
	if len(f.Projects) == 0 {
		return regErr(path, 0, "projects", "no project: add a [projects.NAME] table with root and id")
	}
	if len(f.Clients) == 0 {
		return regErr(path, 0, "clients", "no client: add a [clients.NAME] table with token_env and grants")
	}
	for _, name := range slices.Sorted(maps.Keys(f.Projects)) {
		fp := f.Projects[name]
		table := []string{"projects", name}
		line := loc.table(table)
		if err := checkName(path, line, "project", name); err != nil {
			return err
		}
		root := strings.TrimSpace(fp.Root)
		switch {
		case root == "":
			return regErr(path, loc.key(table, "root"), "projects."+name+".root", "project %s: root is missing: the project's directory", name)
		case !filepath.IsAbs(root):
			root = filepath.Join(filepath.Dir(path), root)
		}
		id := strings.TrimSpace(fp.ID)
		if id == "" {
			return regErr(path, loc.key(table, "id"), "projects."+name+".id", "project %s: id is missing: the project id its log holds (project_id in awr status --json)", name)
		}
		reg.Projects[name] = &RegistryProject{Name: name, Root: filepath.Clean(root), ID: id, Line: line}
	}
	return nil
}

// checkName refuses the name of a [projects.NAME] or [clients.NAME]
// table (kind "project" or "client") that nameRE does not take.
func checkName(path string, line int, kind, name string) error {
	if nameRE.MatchString(name) {
		return nil
	}
	return regErr(path, line, kind+"s."+name, "%s name %q: use 1 to 64 of a-z, 0-9, - and _, starting with a letter or digit", kind, name)
}

// clients reads each [clients.NAME]: the variable that holds its token
// (set, long enough, no white space, no other client's) and its grants
// on the registry's projects.
func (reg *Registry) clients(f *registryFile, loc locator, getenv func(string) string) error {
	path := reg.Path
	seen := map[[sha256.Size]byte]string{}
	for _, name := range slices.Sorted(maps.Keys(f.Clients)) {
		fc := f.Clients[name]
		table := []string{"clients", name}
		line := loc.table(table)
		if err := checkName(path, line, "client", name); err != nil {
			return err
		}
		field := "clients." + name + ".token_env"
		if fc.TokenEnv == "" {
			return regErr(path, loc.key(table, "token_env"), field, "client %s: token_env is missing: the environment variable that holds its bearer token (never the token itself)", name)
		}
		token := getenv(fc.TokenEnv)
		switch {
		case token == "":
			return regErr(path, loc.key(table, "token_env"), field, "client %s: the environment variable %s is not set: it must hold the client's bearer token", name, fc.TokenEnv).With("env", fc.TokenEnv)
		case len([]rune(token)) < MinTokenLength:
			return regErr(path, loc.key(table, "token_env"), field, "client %s: the token in %s has %d characters, fewer than %d: make a longer one (openssl rand -hex 32)", name, fc.TokenEnv, len([]rune(token)), MinTokenLength).With("env", fc.TokenEnv)
		case strings.TrimSpace(token) != token || strings.ContainsAny(token, " \t\r\n"):
			return regErr(path, loc.key(table, "token_env"), field, "client %s: the token in %s holds white space, which no Authorization header can carry", name, fc.TokenEnv).With("env", fc.TokenEnv)
		}
		sum := sha256.Sum256([]byte(token))
		if other, ok := seen[sum]; ok {
			return regErr(path, loc.key(table, "token_env"), field, "client %s: its token is client %s's too: each client needs a token of its own", name, other).With("env", fc.TokenEnv)
		}
		seen[sum] = name
		if len(fc.Grants) == 0 {
			return regErr(path, loc.key(table, "grants"), "clients."+name+".grants", "client %s: no grant: add grants = { PROJECT = \"read\" } (or \"write\")", name)
		}
		c := &RegistryClient{Name: name, TokenEnv: fc.TokenEnv, tokenSum: sum, Grants: map[string]Access{}, Line: line}
		for _, pname := range slices.Sorted(maps.Keys(fc.Grants)) {
			gline := loc.key(append(table, "grants"), pname)
			if gline == 0 {
				gline = loc.key(table, "grants")
			}
			if _, ok := reg.Projects[pname]; !ok {
				return regErr(path, gline, "clients."+name+".grants."+pname, "client %s: grant on %s, which is no project of this registry (projects: %s)", name, pname, strings.Join(slices.Sorted(maps.Keys(reg.Projects)), ", "))
			}
			a := Access(fc.Grants[pname])
			if a != AccessRead && a != AccessWrite {
				return regErr(path, gline, "clients."+name+".grants."+pname, "client %s: grant on %s is %q: use \"read\" or \"write\"", name, pname, fc.Grants[pname])
			}
			c.Grants[pname] = a
		}
		reg.Clients[name] = c
	}
	return nil
}

// regErr is an InvalidInput error on the registry at path:line (line 0
// when no one line is to blame) about field.
func regErr(path string, line int, field, format string, args ...any) *fault.Error {
	where := path
	if line > 0 {
		where = fmt.Sprintf("%s:%d", path, line)
	}
	e := fault.New(fault.InvalidInput, "registry %s: %s", where, fmt.Sprintf(format, args...)).With("path", path)
	if line > 0 {
		e = e.With("line", line)
	}
	if field != "" {
		e = e.With("field", field)
	}
	return e
}

// locator finds the line a table or a key of the registry is written on,
// so that an error about a decoded value names it: a table by its header
// ([projects.shop]) or, for a table written inline or by dotted keys, the
// first line that names it; a key by its line inside its table's section,
// or inside an inline table on the line of its parent key.
type locator struct{ raw []byte }

// table returns the 1-based line of table's header, or of the first line
// that names it; 0 when none does.
func (l locator) table(table []string) int {
	lines := strings.Split(string(l.raw), "\n")
	for i, ln := range lines {
		if h, ok := header(ln); ok && equalPath(h, table) {
			return i + 1
		}
	}
	last := table[len(table)-1]
	for i, ln := range lines {
		if strings.Contains(ln, last) {
			return i + 1
		}
	}
	return 0
}

// key returns the 1-based line of key in table: inside the table's
// section, or written inline ({ key = ... }) on a line of the parent
// table's section that names the table; 0 when it is not found.
func (l locator) key(table []string, key string) int {
	lines := strings.Split(string(l.raw), "\n")
	var cur []string
	for i, ln := range lines {
		if h, ok := header(ln); ok {
			if equalPath(h, append(slicesClone(table), key)) {
				return i + 1
			}
			cur = h
			continue
		}
		k, rest, ok := strings.Cut(strings.TrimSpace(ln), "=")
		if !ok {
			continue
		}
		path := append(slicesClone(cur), splitKey(k)...)
		if equalPath(path, append(slicesClone(table), key)) {
			return i + 1
		}
		// An inline table: parent = { key = ... }.
		if equalPath(path, table) && strings.Contains(rest, "{") {
			for _, part := range strings.Split(strings.Trim(strings.TrimSpace(rest), "{}"), ",") {
				if k2, _, ok := strings.Cut(part, "="); ok && equalPath(splitKey(k2), []string{key}) {
					return i + 1
				}
			}
		}
	}
	if len(table) > 0 {
		return l.table(table)
	}
	return 0
}

// header returns the dotted path of a [table] or [[array]] header line.
func header(ln string) ([]string, bool) {
	s := strings.TrimSpace(ln)
	if i := strings.Index(s, "#"); i >= 0 && !strings.ContainsAny(s[:i], `"'`) {
		s = strings.TrimSpace(s[:i])
	}
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return nil, false
	}
	s = strings.Trim(s, "[]")
	return splitKey(s), true
}

// splitKey splits a dotted TOML key into its parts, unquoted.
func splitKey(k string) []string {
	var parts []string
	for _, p := range strings.Split(k, ".") {
		parts = append(parts, strings.Trim(strings.TrimSpace(p), `"'`))
	}
	return parts
}

func equalPath(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// verifyProjectID is the check NewShared makes of each project: the id
// its log holds must be the registry's.
func verifyProjectID(reg *Registry, rp *RegistryProject, got string) error {
	if got == rp.ID {
		return nil
	}
	return fault.New(fault.InvalidInput, "registry %s:%d: project %s: %s holds the log of project %s, not %s: the root or the id is wrong; nothing was served", reg.Path, rp.Line, rp.Name, rp.Root, got, rp.ID).
		With("path", reg.Path).With("line", rp.Line).With("field", "projects."+rp.Name+".id").
		With("project", rp.Name).With("root", rp.Root).With("expected_id", rp.ID).With("actual_id", got).
		WithHint("awr --project %s status --json", rp.Root)
}
