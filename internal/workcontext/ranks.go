package workcontext

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"sync"
)

// The o200k_base vocabulary is embedded in the binary as one sorted byte
// table (o200k_base.ranks), generated from the tokenizer library by
// `go test ./internal/workcontext -run TestRankTable -update`. Lookups read offsets,
// ranks and token bytes straight out of the embedded string: loading it
// costs nothing per entry, and nothing is built, cached or downloaded at
// run time. TestRankTable_MatchesLibrary checks that the committed file is
// exactly what the library yields and that counting with it gives the
// library's counts.
//
// Layout (integers are little-endian uint32):
//
//	tableMagic
//	n                     number of tokens
//	offs[0..n]            token i is blob[offs[i]:offs[i+1]]
//	ranks[0..n-1]         rank (token id) of token i
//	blob                  the tokens' bytes, concatenated in sorted order

//go:embed o200k_base.ranks
var embeddedTable string

// tableMagic opens a rank table; it names the format and the library
// release the vocabulary came from.
const tableMagic = "awr-o200k_base-ranks-v1 tiktoken-go/tokenizer@v0.10.0\n"

// rankTable is a view of an encoded table: no field is decoded up front.
type rankTable struct {
	n     int
	offs  string // (n+1) uint32
	ranks string // n uint32
	blob  string

	mu   sync.Mutex
	seen map[string]int32 // piece -> its tokens, as counted before
}

func u32(s string, i int) uint32 {
	s = s[4*i : 4*i+4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// token returns the bytes of token i.
func (t *rankTable) token(i int) string {
	return t.blob[u32(t.offs, i):u32(t.offs, i+1)]
}

func (t *rankTable) rank(s string) (uint32, bool) {
	lo, hi := 0, t.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.token(m) < s {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < t.n && t.token(lo) == s {
		return u32(t.ranks, lo), true
	}
	return 0, false
}

// count returns the number of o200k_base tokens in text. A piece's
// count is kept for the next time it is met: a compile counts each chunk
// of the packet and then the whole packet again, and prose repeats its
// words, so most pieces are counted once per process instead of merged
// anew, each of whose lookups is a binary search over the table's 200k
// tokens touching pages of it scattered through the binary.
func (t *rankTable) count(text string) int {
	rs := []rune(text)
	n := 0
	t.mu.Lock()
	defer t.mu.Unlock()
	split(rs, func(start, end int) {
		piece := string(rs[start:end])
		c, ok := t.seen[piece]
		if !ok {
			c = int32(t.pieceTokens(piece))
			if t.seen == nil || len(t.seen) >= maxSeenPieces {
				t.seen = make(map[string]int32, 256)
			}
			t.seen[piece] = c
		}
		n += int(c)
	})
	return n
}

// maxSeenPieces bounds the pieces whose counts a table keeps (a few MB at
// most); past it the memory starts again empty.
const maxSeenPieces = 1 << 16

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

// openTable checks an encoded table's header and sizes and returns a view
// of it; it reads no entry.
func openTable(raw string) (*rankTable, error) {
	if len(raw) < len(tableMagic) || raw[:len(tableMagic)] != tableMagic {
		return nil, errors.New("not a rank table of this version")
	}
	raw = raw[len(tableMagic):]
	if len(raw) < 4 {
		return nil, errors.New("truncated")
	}
	n := int(u32(raw, 0))
	raw = raw[4:]
	if n < 1000 || len(raw) < 4*(n+1)+4*n {
		return nil, errors.New("truncated")
	}
	t := &rankTable{n: n, offs: raw[:4*(n+1)], ranks: raw[4*(n+1) : 4*(2*n+1)], blob: raw[4*(2*n+1):]}
	if u32(t.offs, 0) != 0 || int(u32(t.offs, n)) != len(t.blob) {
		return nil, fmt.Errorf("blob is %d bytes, offsets say %d", len(t.blob), u32(t.offs, n))
	}
	return t, nil
}

// table is the embedded table, checked on first use.
var table = sync.OnceValues(func() (*rankTable, error) {
	t, err := openTable(embeddedTable)
	if err != nil {
		return nil, fmt.Errorf("embedded o200k_base table: %w", err)
	}
	return t, nil
})
