package intake

import (
	"net/url"
	"strings"

	"github.com/awr-dev/awr/internal/fault"
)

// StoreTable is the manifest's [store] table: the project's log lives in a
// shared PostgreSQL database instead of the embedded SQLite file, and
// every checkout that holds this manifest is the same project. Each
// machine keeps a local cache of the log in .awr/awr.db.
type StoreTable struct {
	// URL is the database, postgres://HOST[:PORT]/DB[?PARAMS]; never a
	// password (libpq's environment and ~/.pgpass give it).
	URL string `toml:"url" json:"url"`
	// Project is the project's key in that database (one database holds
	// any number of projects); the manifest's name when empty.
	Project string `toml:"project,omitempty" json:"project,omitempty"`
}

// StoreKey is the project's key in the shared database.
func (m *Manifest) StoreKey() string {
	if m.Store != nil && m.Store.Project != "" {
		return m.Store.Project
	}
	return m.Name
}

// CheckStoreURL refuses what cannot be a project's shared store: a URL
// that is not postgres:// or postgresql://, one without a database, and
// one that holds a password (in its user part or as a password
// parameter), which would put a credential in the manifest, where every
// checkout and every commit would carry it. where names the setting in
// messages (--store, AWR_STORE, manifest PATH: store.url).
// Errors: InvalidInput naming where, with a hint that is a complete
// command; a refused password is detail "secret": "password" and the
// message never repeats it.
func CheckStoreURL(where, raw string) error {
	hint := "awr init --store postgres://USER@HOST:5432/DB --accept"
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return fault.New(fault.InvalidInput, "%s: %q is not a postgres:// URL; the shared store is PostgreSQL, and the default store (no [store] table) is the embedded SQLite file", where, redact(raw)).
			With("setting", where).WithHint("%s", hint)
	}
	if _, has := u.User.Password(); has || u.Query().Has("password") {
		return fault.New(fault.InvalidInput, "%s: the URL holds a password; credentials never go into the manifest or the log", where).
			With("setting", where).With("secret", "password").WithHint("%s", hint)
	}
	if strings.Trim(u.Path, "/") == "" {
		return fault.New(fault.InvalidInput, "%s: %q names no database", where, raw).With("setting", where).WithHint("%s", hint)
	}
	return nil
}

// redact is raw without whatever sits between "://" and "@" (a user and
// password), for a message about a URL that does not parse.
func redact(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		if at := strings.LastIndex(raw, "@"); at >= 0 {
			return "…" + raw[at:]
		}
		return raw
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		return scheme + "://…" + rest[at:]
	}
	return raw
}
