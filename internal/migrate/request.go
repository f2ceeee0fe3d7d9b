package migrate

import (
	"context"
	"time"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/intake"
)

// Manifest checks where `awr migrate --to` sends the log (to: "sqlite",
// or a postgres:// URL) and reads the manifest of the project in dir,
// before any lock is taken.
// Errors: InvalidInput for a URL that is not postgres:// or holds a
// password; NotFound without a manifest (hint awr init); those of
// intake.ReadManifest.
func Manifest(dir, to string) (*intake.Manifest, error) {
	if to != "sqlite" {
		if err := intake.CheckStoreURL("--to", to); err != nil {
			return nil, err
		}
	}
	m, ok, err := intake.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fault.New(fault.NotFound, "migrate: %s has no manifest (.awr/project.toml)", dir).
			With("path", intake.ManifestPath(dir)).WithHint("awr init")
	}
	return m, nil
}

// To moves p's log, whose manifest is m, to where to says: ToSQLite for
// "sqlite", ToShared (under key) for a PostgreSQL URL. The caller holds
// the project directory's and the manifest's locks.
// Errors: those of ToSQLite and ToShared.
func To(ctx context.Context, p Project, m *intake.Manifest, to, key string, lockTimeout time.Duration, progress Progress) (*Result, error) {
	if to == "sqlite" {
		return ToSQLite(ctx, p, m, progress)
	}
	return ToShared(ctx, p, m, to, key, lockTimeout, progress)
}
