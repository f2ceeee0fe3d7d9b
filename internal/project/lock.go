package project

import (
	"os"
	"path/filepath"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/pathcheck"
)

// lockManifest takes an exclusive lock for a read-modify-write of the
// project's manifest, held until the returned function is called. The
// lock is advisory (flock on .awr/manifest.lock) and is shared by every awr
// process on the machine, so concurrent `source add`s each see the
// others' entries.
// Errors: Storage when the lock file cannot be opened or locked.
func (p *Project) lockManifest() (func(), error) {
	path := filepath.Join(p.dir, ".awr", "manifest.lock")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fault.Wrap(fault.Storage, err, "lock manifest")
	}
	return pathcheck.Lock(path, "lock manifest")
}
