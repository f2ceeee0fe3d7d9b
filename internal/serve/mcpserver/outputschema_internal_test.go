package mcpserver

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

type shapeInner struct {
	Name  string   `json:"name"`
	Tags  []string `json:"tags"`
	Maybe *int     `json:"maybe"`
}

type shapeOuter struct {
	Zeta   string                `json:"zeta"`
	Alpha  *shapeInner           `json:"alpha"`
	List   []shapeInner          `json:"list"`
	ByName map[string]shapeInner `json:"by_name"`
	Opt    *shapeInner           `json:"opt,omitempty"`
	Any    any                   `json:"any"`
}

// TestOutput_Reshape: a result is written to its schema, with no null:
// a nil slice is [], any other nil pointer or map is left out, the rest
// (key order, numbers, a null inside an any) is kept byte for byte.
func TestOutput_Reshape(t *testing.T) {
	out := outputOf[shapeOuter]("test")
	b, err := marshal(shapeOuter{Zeta: "z", List: []shapeInner{{Name: "a"}}, Any: map[string]any{"before": nil}})
	require.NoError(t, err)
	got, err := reshape(b, out.shape)
	require.NoError(t, err)
	require.Equal(t, `{"zeta":"z","list":[{"name":"a","tags":[]}],"any":{"before":null}}`, string(got))

	r, err := out.schema.Resolve(nil)
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(got, &v))
	require.NoError(t, r.Validate(v))
	require.NoError(t, json.Unmarshal(b, &v))
	require.Error(t, r.Validate(v), "the CLI's encoding, with its nulls, is not the tool's")
	require.ElementsMatch(t, []string{"zeta", "list", "any"}, out.schema.Required, "a field that could be null is optional, an array required")

	b, err = marshal(shapeOuter{ByName: map[string]shapeInner{"k": {Name: "k", Tags: []string{"x"}}}, Opt: &shapeInner{}})
	require.NoError(t, err)
	got, err = reshape(b, out.shape)
	require.NoError(t, err)
	require.Equal(t, `{"zeta":"","list":[],"by_name":{"k":{"name":"k","tags":["x"]}},"opt":{"name":"","tags":[]},"any":null}`, string(got))
	require.NoError(t, json.Unmarshal(got, &v))
	require.NoError(t, r.Validate(v))
}

// TestOutput_ReshapeWithoutNull: reshape keeps a result without a null
// as it is, unread; walking it would give the same bytes.
func TestOutput_ReshapeWithoutNull(t *testing.T) {
	out := outputOf[shapeOuter]("test")
	n := 3
	b, err := marshal(shapeOuter{Zeta: "z", Alpha: &shapeInner{Name: "a", Tags: []string{"t"}, Maybe: &n}, List: []shapeInner{{Name: "b", Tags: []string{}, Maybe: &n}},
		ByName: map[string]shapeInner{"k": {Name: "k", Tags: []string{"x"}, Maybe: &n}}, Opt: &shapeInner{Tags: []string{}, Maybe: &n}, Any: map[string]any{"x": 1}})
	require.NoError(t, err)
	require.NotContains(t, string(b), "null")
	got, err := reshape(b, out.shape)
	require.NoError(t, err)
	require.Equal(t, string(b), string(got))
	var walked bytes.Buffer
	require.NoError(t, reshapeInto(&walked, b, out.shape))
	require.Equal(t, string(b), walked.String(), "the walk changes nothing either")
}
