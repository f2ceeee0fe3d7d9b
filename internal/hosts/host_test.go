package hosts_test

import (
	"testing"

	"github.com/awr-dev/awr/internal/hosts"
	"github.com/stretchr/testify/require"
)

func TestForkedFrom(t *testing.T) {
	t.Parallel()
	id := "1d95e35a-4560-4cb9-972c-98d9115ca7dd"
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"resume and fork", []string{"claude", "-p", "go", "--resume", id, "--fork-session"}, id},
		{"short flag", []string{"node", "/x/cli.js", "--fork-session", "-r", id}, id},
		{"equals form", []string{"claude", "--resume=" + id, "--fork-session"}, id},
		{"resume without fork", []string{"claude", "--resume", id}, ""},
		{"fork without an id", []string{"claude", "--continue", "--fork-session"}, ""},
		{"resume picker", []string{"claude", "--resume", "--fork-session"}, ""},
		{"an id awr cannot key", []string{"claude", "--resume", "a b/c", "--fork-session"}, ""},
		{"nothing", nil, ""},
	} {
		require.Equal(t, c.want, hosts.ForkedFrom(c.args), c.name)
	}
}
