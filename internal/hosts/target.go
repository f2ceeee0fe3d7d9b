package hosts

import (
	"os"

	"github.com/awr-dev/awr/internal/shellwords"
)

// Target parses a host and a scope as a person names them (`awr client
// install --client HOST --scope SCOPE`, awr doctor's hooks) and returns
// the settings file of that host at that scope for the project in dir,
// under this user's home directory and environment (SettingsPath).
// Errors: InvalidInput for an unknown host or scope; those of
// SettingsPath.
func Target(client, scope, dir string) (Host, Scope, string, error) {
	h, err := ParseHost(client)
	if err != nil {
		return "", "", "", err
	}
	sc, err := ParseScope(scope)
	if err != nil {
		return "", "", "", err
	}
	home, _ := os.UserHomeDir()
	path, err := SettingsPath(h, sc, dir, home, os.Getenv)
	if err != nil {
		return "", "", "", err
	}
	return h, sc, path, nil
}

// HookCommand is the hook command line an install writes for host h when
// none is given: the awr binary bin, one shell word, then `client hook
// --client HOST`.
func HookCommand(bin string, h Host) string {
	return shellwords.Quote(bin) + " client hook --client " + string(h)
}
