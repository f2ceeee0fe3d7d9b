package soak

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// built is the awr binary the process tests run, built once per test
// binary (a cold build takes a minute on two cores) into a directory
// every user may enter, so the read-only tests can run it as nobody.
var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
	out  []byte
}

// awrBinary returns the path of the awr binary built from ../cmd/awr.
func awrBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "awr-soak-"); built.err != nil {
			return
		}
		if built.err = os.Chmod(built.dir, 0o755); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "awr")
		built.out, built.err = exec.Command("go", "build", "-o", built.bin, "../cmd/awr").CombinedOutput()
	})
	require.NoError(t, built.err, "go build ../cmd/awr: %s", built.out)
	return built.bin
}

// removeBuilt removes the built binary once every test has run.
func removeBuilt() {
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
}
