package mcpserver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/serve/mcpserver"
	"github.com/stretchr/testify/require"
)

const goodToken = "0123456789abcdef0123456789abcdef-good"

// goodRegistry is a registry every case below breaks in one place.
const goodRegistry = `# a registry
[service]
allowed_hosts = ["mcp.example.internal:7424"]
allowed_origins = ["https://agents.example.internal"]

[projects.shop]
root = "/srv/awr/shop"
id = "01JC7Q0000000000000000SHOP"

[clients.alice]
token_env = "TOKEN_ALICE"
grants = { shop = "write" }
`

func TestReadRegistry_OK(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "registry.toml")
	require.NoError(t, os.WriteFile(path, []byte(goodRegistry), 0o600))
	reg, err := mcpserver.ReadRegistry(path, func(string) string { return goodToken })
	require.NoError(t, err)
	require.Equal(t, "/srv/awr/shop", reg.Projects["shop"].Root)
	require.Equal(t, 6, reg.Projects["shop"].Line)
	require.Equal(t, mcpserver.AccessWrite, reg.Clients["alice"].Grants["shop"])
	require.Equal(t, []string{"mcp.example.internal:7424"}, reg.AllowedHosts)
}

func TestReadRegistry_Bad(t *testing.T) {
	t.Parallel()
	env := map[string]string{"TOKEN_ALICE": goodToken, "TOKEN_BOB": goodToken, "SHORT": "abc", "SPACED": "0123456789abcdef 0123456789abcdef"}
	for _, c := range []struct {
		name, old, new string
		line           int    // 0: no one line
		field, message string // the details' field; a part of the message
	}{
		{"NotTOML", `id = "01JC7Q0000000000000000SHOP"`, `id = "01JC7Q`, 8, "", "strings cannot contain newlines"},
		{"UnknownField", `token_env = "TOKEN_ALICE"`, "token_env = \"TOKEN_ALICE\"\ntoken = \"s3cret-value-never-echoed\"", 12, "clients.alice.token", "unknown field clients.alice.token"},
		{"UnknownTable", `[service]`, "[servce]", 2, "servce", "unknown field servce"},
		{"WrongType", `root = "/srv/awr/shop"`, `root = 3`, 7, "projects.shop.root", "projects.shop.root: incompatible types"},
		{"ProjectName", `[projects.shop]`, `[projects."Shop Two"]`, 6, `projects.Shop Two`, `project name "Shop Two"`},
		{"RootMissing", `root = "/srv/awr/shop"`, ``, 6, "projects.shop.root", "root is missing"},
		{"IDMissing", `id = "01JC7Q0000000000000000SHOP"`, `id = ""`, 8, "projects.shop.id", "id is missing"},
		{"NoProject", "[projects.shop]\nroot = \"/srv/awr/shop\"\nid = \"01JC7Q0000000000000000SHOP\"", "", 0, "projects", "no project"},
		{"NoClient", "[clients.alice]\ntoken_env = \"TOKEN_ALICE\"\ngrants = { shop = \"write\" }", "", 0, "clients", "no client"},
		{"ClientName", `[clients.alice]`, `[clients.-alice]`, 10, "clients.-alice", `client name "-alice"`},
		{"TokenEnvMissing", `token_env = "TOKEN_ALICE"`, ``, 10, "clients.alice.token_env", "token_env is missing"},
		{"TokenEnvUnset", `token_env = "TOKEN_ALICE"`, `token_env = "TOKEN_NOBODY"`, 11, "clients.alice.token_env", "TOKEN_NOBODY is not set"},
		{"TokenShort", `token_env = "TOKEN_ALICE"`, `token_env = "SHORT"`, 11, "clients.alice.token_env", "has 3 characters, fewer than 32"},
		{"TokenSpaced", `token_env = "TOKEN_ALICE"`, `token_env = "SPACED"`, 11, "clients.alice.token_env", "white space"},
		{"TokenShared", `grants = { shop = "write" }`, "grants = { shop = \"write\" }\n\n[clients.bob]\ntoken_env = \"TOKEN_BOB\"\ngrants = { shop = \"read\" }", 15, "clients.bob.token_env", "its token is client alice's too"},
		{"NoGrant", `grants = { shop = "write" }`, `grants = {}`, 12, "clients.alice.grants", "no grant"},
		{"GrantUnknownProject", `grants = { shop = "write" }`, `grants = { shop = "write", docs = "read" }`, 12, "clients.alice.grants.docs", "grant on docs, which is no project of this registry"},
		{"GrantValue", `grants = { shop = "write" }`, `grants = { shop = "admin" }`, 12, "clients.alice.grants.shop", `grant on shop is "admin"`},
		{"GrantSubtable", `grants = { shop = "write" }`, "\n[clients.alice.grants]\nshop = \"owner\"", 14, "clients.alice.grants.shop", `grant on shop is "owner"`},
		{"AllowedHost", `allowed_hosts = ["mcp.example.internal:7424"]`, `allowed_hosts = ["http://mcp.example.internal/"]`, 3, "service.allowed_hosts", "is not HOST:PORT"},
		{"AllowedOrigin", `allowed_origins = ["https://agents.example.internal"]`, `allowed_origins = ["agents.example.internal"]`, 4, "service.allowed_origins", "is not an origin"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			text := strings.Replace(goodRegistry, c.old, c.new, 1)
			require.NotEqual(t, goodRegistry, text)
			path := filepath.Join(t.TempDir(), "registry.toml")
			require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
			_, err := mcpserver.ReadRegistry(path, func(k string) string { return env[k] })
			require.Error(t, err)
			fe := fault.As(err)
			require.Equal(t, fault.InvalidInput, fe.Code, "%v", err)
			require.Contains(t, fe.Message, c.message)
			require.NotContains(t, fe.Message, goodToken, "a token is never shown")
			require.NotContains(t, fe.Message, "s3cret")
			if c.line > 0 {
				require.Contains(t, fe.Message, fmt.Sprintf("registry %s:%d: ", path, c.line))
				require.Equal(t, c.line, fe.Details["line"])
			} else {
				require.Contains(t, fe.Message, "registry "+path)
			}
			if c.field != "" {
				require.Equal(t, c.field, fe.Details["field"])
			}
			require.Empty(t, fe.Hint)
		})
	}
	t.Run("Missing", func(t *testing.T) {
		t.Parallel()
		_, err := mcpserver.ReadRegistry(filepath.Join(t.TempDir(), "nope.toml"), nil)
		require.Equal(t, fault.InvalidInput, fault.As(err).Code)
		require.Contains(t, err.Error(), "no such file")
	})
	t.Run("Directory", func(t *testing.T) {
		t.Parallel()
		_, err := mcpserver.ReadRegistry(t.TempDir(), nil)
		require.Equal(t, fault.InvalidInput, fault.As(err).Code)
		require.Contains(t, err.Error(), "not a regular file")
	})
}

// TestNewShared_Bad: the projects are checked at start; a root that is
// not the project the registry says refuses to start, naming the line.
func TestNewShared_Bad(t *testing.T) {
	t.Parallel()
	dir, id := checkoutProject(t, 3)
	empty := t.TempDir()
	for _, c := range []struct {
		name, root, id, message string
		code                    fault.Code
	}{
		{"IDMismatch", dir, "01JC7Q0000000000000000SHOP", fmt.Sprintf("holds the log of project %s, not 01JC7Q0000000000000000SHOP", id), fault.InvalidInput},
		{"NotAProject", empty, id, "project shop (" + empty + ")", fault.NotFound},
		{"NoDirectory", filepath.Join(empty, "nope"), id, "is not a directory", fault.InvalidInput},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "registry.toml")
			reg := fmt.Sprintf("[projects.shop]\nroot = %q\nid = %q\n\n[clients.alice]\ntoken_env = \"T\"\ngrants = { shop = \"read\" }\n", c.root, c.id)
			require.NoError(t, os.WriteFile(path, []byte(reg), 0o600))
			r, err := mcpserver.ReadRegistry(path, func(string) string { return goodToken })
			require.NoError(t, err)
			_, err = mcpserver.NewShared(context.Background(), mcpserver.SharedOptions{Registry: r, Version: "test"})
			require.Error(t, err)
			fe := fault.As(err)
			require.Equal(t, c.code, fe.Code, "%v", err)
			require.Contains(t, fe.Message, fmt.Sprintf("registry %s:1: ", path))
			require.Contains(t, fe.Message, c.message)
		})
	}
}

// TestDocs_RegistryExample reads the registry example of docs/mcp.md
// ("The shared service"), checks it parses as the docs say, then serves
// it, its roots and ids replaced by real projects: each client sees its
// grants, and only them.
func TestDocs_RegistryExample(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(testkit.Path("docs", "mcp.md"))
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(doc), "<!-- registry example")
	require.True(t, ok, "docs/mcp.md has no registry example")
	_, after, ok = strings.Cut(after, "```toml\n")
	require.True(t, ok)
	example, _, ok := strings.Cut(after, "```")
	require.True(t, ok)
	env := map[string]string{}
	for _, m := range regexp.MustCompile(`token_env = "([A-Z0-9_]+)"`).FindAllStringSubmatch(example, -1) {
		env[m[1]] = newToken(t)
	}
	path := filepath.Join(t.TempDir(), "registry.toml")
	require.NoError(t, os.WriteFile(path, []byte(example), 0o600))
	reg, err := mcpserver.ReadRegistry(path, func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Len(t, reg.Projects, 2)
	require.Len(t, reg.Clients, 2)

	served := example
	seed := int64(10)
	for _, name := range []string{"shop", "docs"} {
		rp := reg.Projects[name]
		require.NotNil(t, rp, name)
		dir, id := checkoutProject(t, seed)
		seed++
		served = strings.Replace(served, fmt.Sprintf("root = %q", rp.Root), fmt.Sprintf("root = %q", dir), 1)
		served = strings.Replace(served, fmt.Sprintf("id = %q", rp.ID), fmt.Sprintf("id = %q", id), 1)
	}
	svc := startShared(t, served, env)
	for name, c := range reg.Clients {
		cs := connectHTTP(t, svc.url, env[c.TokenEnv])
		out, isErr := call(t, cs, "awr_projects_list", nil)
		require.False(t, isErr, "%v", out)
		got := map[string]string{}
		for _, p := range out["projects"].([]any) {
			p := p.(map[string]any)
			got[p["name"].(string)] = p["access"].(string)
		}
		want := map[string]string{}
		for p, a := range c.Grants {
			want[p] = string(a)
		}
		require.Equal(t, want, got, name)
	}
}
