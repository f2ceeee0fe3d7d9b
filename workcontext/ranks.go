package workcontext

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"sync"

	"github.com/dlclark/regexp2/v2"
	"github.com/tiktoken-go/tokenizer"
)

// The tokenizer library builds its 200,000-entry vocabulary map the first
// time it is used in a process, about 14 ms: longer than the rest of a
// `context compile`. rankTable holds the same vocabulary as one sorted
// byte table, written once per machine to the user cache directory and
// read back in about a millisecond; counting with it gives the library's
// counts exactly (TestRankTable_MatchesLibrary).

// splitPattern is o200k_base's pre-tokenization rule: text is cut into
// pieces by it before byte-pair merging, and no token spans two pieces.
const splitPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// tableMagic opens a cached table; the version names the library release
// the vocabulary came from, so an upgrade rebuilds it.
const tableMagic = "awr-o200k_base-ranks-v1 tiktoken-go/tokenizer@v0.10.0\n"

type rankTable struct {
	blob  []byte   // the tokens' bytes, concatenated in sorted order
	offs  []uint32 // token i is blob[offs[i]:offs[i+1]]
	ranks []uint32 // rank (token id) of token i
	split *regexp2.Regexp
}

func (t *rankTable) rank(s string) (uint32, bool) {
	n := len(t.ranks)
	i := sort.Search(n, func(i int) bool { return string(t.blob[t.offs[i]:t.offs[i+1]]) >= s })
	if i < n && string(t.blob[t.offs[i]:t.offs[i+1]]) == s {
		return t.ranks[i], true
	}
	return 0, false
}

// count returns the number of o200k_base tokens in text.
func (t *rankTable) count(text string) (int, error) {
	n := 0
	m, err := t.split.FindStringMatch(text)
	if err != nil {
		return 0, err
	}
	for m != nil {
		n += t.pieceTokens(m.String())
		if m, err = t.split.FindNextMatch(m); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// pieceTokens merges a piece's bytes pairwise, lowest rank first, as
// byte-pair encoding does, and returns how many tokens remain.
func (t *rankTable) pieceTokens(piece string) int {
	if _, ok := t.rank(piece); ok {
		return 1
	}
	// bounds[i] is the start of part i; ranks[i] the rank of merging part
	// i with part i+1.
	bounds := make([]int, len(piece)+1)
	for i := range bounds {
		bounds[i] = i
	}
	pairRank := func(i int) uint32 {
		if i+2 >= len(bounds) {
			return math.MaxUint32
		}
		if r, ok := t.rank(piece[bounds[i]:bounds[i+2]]); ok {
			return r
		}
		return math.MaxUint32
	}
	ranks := make([]uint32, len(bounds))
	for i := range ranks {
		ranks[i] = pairRank(i)
	}
	for len(bounds) > 2 {
		best, at := uint32(math.MaxUint32), -1
		for i := 0; i < len(bounds)-2; i++ {
			if ranks[i] < best {
				best, at = ranks[i], i
			}
		}
		if at < 0 {
			break
		}
		bounds = append(bounds[:at+1], bounds[at+2:]...)
		ranks = append(ranks[:at+1], ranks[at+2:]...)
		ranks[at] = pairRank(at)
		if at > 0 {
			ranks[at-1] = pairRank(at - 1)
		}
	}
	return len(bounds) - 1
}

// encode writes the table in the cache format: magic, count, offsets,
// ranks, bytes.
func (t *rankTable) encode() []byte {
	var b bytes.Buffer
	b.WriteString(tableMagic)
	binary.Write(&b, binary.LittleEndian, uint32(len(t.ranks)))
	binary.Write(&b, binary.LittleEndian, t.offs)
	binary.Write(&b, binary.LittleEndian, t.ranks)
	b.Write(t.blob)
	return b.Bytes()
}

func decodeTable(raw []byte) (*rankTable, error) {
	if !bytes.HasPrefix(raw, []byte(tableMagic)) {
		return nil, errors.New("not a rank table of this version")
	}
	raw = raw[len(tableMagic):]
	if len(raw) < 4 {
		return nil, errors.New("truncated")
	}
	n := int(binary.LittleEndian.Uint32(raw))
	raw = raw[4:]
	need := 4*(n+1) + 4*n
	if n < 1000 || len(raw) < need {
		return nil, errors.New("truncated")
	}
	t := &rankTable{offs: make([]uint32, n+1), ranks: make([]uint32, n)}
	for i := range t.offs {
		t.offs[i] = binary.LittleEndian.Uint32(raw[4*i:])
	}
	raw = raw[4*(n+1):]
	for i := range t.ranks {
		t.ranks[i] = binary.LittleEndian.Uint32(raw[4*i:])
	}
	t.blob = raw[4*n:]
	if int(t.offs[n]) != len(t.blob) {
		return nil, fmt.Errorf("blob is %d bytes, offsets say %d", len(t.blob), t.offs[n])
	}
	return t, nil
}

// buildTable reads the vocabulary out of the tokenizer library (token by
// token, through Decode) into a sorted table.
func buildTable(codec tokenizer.Codec) (*rankTable, error) {
	type entry struct {
		tok  string
		rank uint32
	}
	var es []entry
	for id := uint(0); id < 200000; id++ {
		s, err := codec.Decode([]uint{id})
		if err != nil || s == "" {
			continue
		}
		es = append(es, entry{s, uint32(id)})
	}
	if len(es) < 190000 {
		return nil, fmt.Errorf("only %d tokens decoded", len(es))
	}
	sort.Slice(es, func(i, j int) bool { return es[i].tok < es[j].tok })
	t := &rankTable{offs: make([]uint32, 0, len(es)+1), ranks: make([]uint32, 0, len(es))}
	var blob bytes.Buffer
	for i, e := range es {
		if i > 0 && es[i-1].tok == e.tok {
			return nil, fmt.Errorf("token %q decoded twice", e.tok)
		}
		t.offs = append(t.offs, uint32(blob.Len()))
		t.ranks = append(t.ranks, e.rank)
		blob.WriteString(e.tok)
	}
	t.offs = append(t.offs, uint32(blob.Len()))
	t.blob = blob.Bytes()
	return t, nil
}

// cachePath is where the table lives: AWR_CACHE_DIR, else the user cache
// directory.
func cachePath() (string, error) {
	dir := os.Getenv("AWR_CACHE_DIR")
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(base, "awr")
	}
	return filepath.Join(dir, "o200k_base.ranks"), nil
}

var (
	tableOnce sync.Once
	table     *rankTable
)

// loadTable returns the cached table, or nil when there is none (yet).
func loadTable() *rankTable {
	tableOnce.Do(func() {
		path, err := cachePath()
		if err != nil {
			return
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return
		}
		t, err := decodeTable(raw)
		if err != nil {
			return
		}
		split, err := regexp2.Compile(splitPattern, regexp2.None)
		if err != nil {
			return
		}
		t.split = split
		table = t
	})
	return table
}

// saveTable writes the table for later processes, atomically. Failing to
// cache is not an error: counting works without it.
func saveTable(codec tokenizer.Codec) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	path, err := cachePath()
	if err != nil {
		return
	}
	t, err := buildTable(codec)
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".o200k-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(t.encode())
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
	}
}
