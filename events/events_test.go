package events_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/stretchr/testify/require"
)

// TestPayloadTypes holds the kind table and the payloads' Kind methods to
// each other: every kind decodes to a payload of that kind, no two kinds
// share a payload type, and every Kind constant declared in events.go is in
// the table.
func TestPayloadTypes(t *testing.T) {
	t.Parallel()
	types := map[string]events.Kind{}
	for _, k := range events.Kinds() {
		p, err := events.DecodePayload(k, []byte(`{}`))
		require.NoError(t, err, k)
		require.Equal(t, k, p.Kind(), "the payload constructed for %s names another kind", k)
		typ := fmt.Sprintf("%T", p)
		require.NotContains(t, types, typ, "%s and %s share the payload type %s", k, types[typ], typ)
		types[typ] = k
	}

	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "events.go", nil, 0)
	require.NoError(t, err)
	declared := 0
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Kind" {
				continue
			}
			for i, name := range vs.Names {
				lit := vs.Values[i].(*ast.BasicLit)
				kind, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				require.True(t, events.Known(events.Kind(kind)), "%s (%q) has no payload type", name.Name, kind)
				declared++
			}
		}
	}
	require.Equal(t, len(events.Kinds()), declared, "every kind in the table is declared in events.go")
}
