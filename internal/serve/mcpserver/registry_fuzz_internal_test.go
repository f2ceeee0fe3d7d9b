package mcpserver

import (
	"strings"
	"testing"

	"github.com/awr-dev/awr/internal/fault"
)

// FuzzParseRegistry feeds any bytes to the registry parser: it never
// panics, and what it refuses is InvalidInput naming the file (with the
// line when it names one, a line of the file).
func FuzzParseRegistry(f *testing.F) {
	for _, seed := range []string{
		"[projects.shop]\nroot = \"/srv/shop\"\nid = \"X\"\n\n[clients.a]\ntoken_env = \"T\"\ngrants = { shop = \"write\" }\n",
		"[projects.shop]\nroot = \"/srv/shop\"\nid = \"X\"\n[clients.a]\ntoken_env = \"T\"\n[clients.a.grants]\nshop = \"read\"\n",
		"[]\n[[x]]\n[\"a.b\".c]\nd = { e = 1, f = { g = 2 } }\n",
		"[service]\nallowed_hosts = [\"h:1\", 3]\n",
		"projects.shop.root = \"r\"\nprojects.shop.id = \"i\"\nclients.a.token_env = \"T\"\nclients.a.grants.shop = \"write\"\n",
		"# only a comment\n",
		"[projects.'shop']\nroot='r' # c\nid='i'\n[clients.\"a\"]\ntoken_env='T'\ngrants={shop='admin'}\n",
	} {
		f.Add([]byte(seed))
	}
	getenv := func(string) string { return strings.Repeat("t", 40) }
	f.Fuzz(func(t *testing.T, raw []byte) {
		reg, err := parseRegistry("/r.toml", raw, getenv)
		if err == nil {
			if len(reg.Projects) == 0 || len(reg.Clients) == 0 {
				t.Fatalf("a registry without projects or clients passed: %+v", reg)
			}
			for _, c := range reg.Clients {
				for p, a := range c.Grants {
					if reg.Projects[p] == nil || (a != AccessRead && a != AccessWrite) {
						t.Fatalf("a bad grant passed: %s %q", p, a)
					}
				}
			}
			return
		}
		fe := fault.As(err)
		if fe.Code != fault.InvalidInput || !strings.HasPrefix(fe.Message, "registry /r.toml") {
			t.Fatalf("refused as %s: %s", fe.Code, fe.Message)
		}
		if line, ok := fe.Details["line"].(int); ok && (line < 1 || line > strings.Count(string(raw), "\n")+1) {
			t.Fatalf("line %d of a file of %d lines: %s", line, strings.Count(string(raw), "\n")+1, fe.Message)
		}
	})
}

// FuzzForbidden feeds any body to the grant check made before the SDK
// reads a request: it never panics, and refuses only with NotFound or
// InvalidInput.
func FuzzForbidden(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"awr_status","arguments":{"project":"docs"}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"awr_status","arguments":{"project":"shop"}}},{"id":2,"method":"tools/call","params":{"name":"awr_session_start","arguments":{"project":"shop"}}}]`,
		`{"method":"tools/call","params":{"name":"awr_status","arguments":"x"}}`,
		`{"method":"tools/call","Params":{"name":"awr_status","arguments":{"project":"docs"}},"params":{}}`,
		`[[[[`, `null`, `"x"`, ``,
	} {
		f.Add([]byte(seed))
	}
	s := &Server{access: map[string]bool{"awr_status": true, "awr_session_start": false, "awr_projects_list": true}, global: map[string]bool{"awr_projects_list": true}}
	sh := &Shared{srv: s, projects: map[string]*sharedProject{"shop": {reg: &RegistryProject{Name: "shop"}}, "docs": {reg: &RegistryProject{Name: "docs"}}}}
	c := &RegistryClient{Name: "a", Grants: map[string]Access{"shop": AccessRead}}
	f.Fuzz(func(t *testing.T, body []byte) {
		_, err := sh.forbidden(c, body)
		if err != nil && err.Code != fault.NotFound && err.Code != fault.InvalidInput {
			t.Fatalf("refused as %s: %s", err.Code, err.Message)
		}
	})
}
