package workcontext

import "unicode"

// splitPattern is o200k_base's pre-tokenization rule: text is cut into
// pieces by it before byte-pair merging, and no token spans two pieces.
// awr does not run it as a regular expression (it needs a backtracking
// engine for its lookahead, and the engine's tables cost every process
// start): split below is the same rule written out, and TestSplit_
// MatchesPattern holds the two equal, piece for piece.
const splitPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// Classes of a rune, as the pattern names them.
const (
	cLetter = 1 << iota // \p{L}
	cNumber             // \p{N}
	cUpper              // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	cLower              // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	cSpace              // \s (unicode.IsSpace)
)

var asciiClass = func() (t [128]uint8) {
	for r := range rune(128) {
		t[r] = classOf(r)
	}
	return t
}()

func classOf(r rune) uint8 {
	var c uint8
	if unicode.IsLetter(r) {
		c |= cLetter
	}
	if unicode.IsNumber(r) {
		c |= cNumber
	}
	mark, lm, lo := unicode.IsMark(r), unicode.Is(unicode.Lm, r), unicode.Is(unicode.Lo, r)
	if mark || lm || lo || unicode.Is(unicode.Lu, r) || unicode.Is(unicode.Lt, r) {
		c |= cUpper
	}
	if mark || lm || lo || unicode.Is(unicode.Ll, r) {
		c |= cLower
	}
	if unicode.IsSpace(r) {
		c |= cSpace
	}
	return c
}

func class(r rune) uint8 {
	if r < 128 {
		return asciiClass[r]
	}
	return classOf(r)
}

// split calls piece with the bounds of each piece of rs, in order, as
// splitPattern's successive leftmost matches cut it. rs is the text as
// runes, as the regular expression engine reads it (each invalid UTF-8
// byte is U+FFFD).
func split(rs []rune, piece func(start, end int)) {
	sp := splitter{rs: rs, n: len(rs), cl: make([]uint8, len(rs))}
	for i, r := range rs {
		sp.cl[i] = class(r)
	}
	for s := 0; s < sp.n; {
		e := sp.match(s)
		if e < 0 {
			s++
			continue
		}
		piece(s, e)
		s = e
	}
}

// splitter holds the text split cuts: its runes, their number and their
// classes.
type splitter struct {
	rs []rune
	n  int
	cl []uint8
}

func (sp *splitter) is(i int, c uint8) bool { return i < sp.n && sp.cl[i]&c != 0 }

func (sp *splitter) newline(i int) bool { return i < sp.n && (sp.rs[i] == '\r' || sp.rs[i] == '\n') }

// other is [^\r\n\p{L}\p{N}].
func (sp *splitter) other(i int) bool {
	return i < sp.n && !sp.newline(i) && sp.cl[i]&(cLetter|cNumber) == 0
}

// symbol is [^\s\p{L}\p{N}].
func (sp *splitter) symbol(i int) bool { return i < sp.n && sp.cl[i]&(cSpace|cLetter|cNumber) == 0 }

// contraction is the length of (?i:'s|'t|'re|'ve|'m|'ll|'d) at i, or 0.
func (sp *splitter) contraction(i int) int {
	rs := sp.rs
	if i+1 >= sp.n || rs[i] != '\'' {
		return 0
	}
	switch rs[i+1] {
	case 's', 'S', 'ſ', 't', 'T', 'm', 'M', 'd', 'D':
		return 2
	}
	if i+2 < sp.n {
		a, b := unicode.ToLower(rs[i+1]), unicode.ToLower(rs[i+2])
		if a == 'r' && b == 'e' || a == 'v' && b == 'e' || a == 'l' && b == 'l' {
			return 3
		}
	}
	return 0
}

// upper starts a word at s after lead characters (1: one character that
// is neither a letter, a number nor a line end; 0: none) at p, and runs
// its Upper letters to k; ok is false when lead 1 finds no such character.
func (sp *splitter) upper(s, lead int) (p, k int, ok bool) {
	if lead == 1 && !sp.other(s) {
		return 0, 0, false
	}
	p = s + lead
	k = p
	for sp.is(k, cUpper) {
		k++
	}
	return p, k, true
}

// words tries the two letter alternatives at s; -1 when neither matches.
func (sp *splitter) words(s int) int {
	for _, lead := range []int{1, 0} { // [^\r\n\p{L}\p{N}]? is greedy
		p, k, ok := sp.upper(s, lead)
		if !ok {
			continue
		}
		// Upper* Lower+: the longest Upper run that a Lower follows.
		j := k
		for j >= p && !sp.is(j, cLower) {
			j--
		}
		if j >= p {
			e := j
			for sp.is(e, cLower) {
				e++
			}
			return e + sp.contraction(e)
		}
	}
	for _, lead := range []int{1, 0} {
		p, k, ok := sp.upper(s, lead)
		if !ok {
			continue
		}
		// Upper+ Lower*.
		if k > p {
			for sp.is(k, cLower) {
				k++
			}
			return k + sp.contraction(k)
		}
	}
	return -1
}

// match is the end of the leftmost match at s, or -1.
func (sp *splitter) match(s int) int {
	if e := sp.words(s); e >= 0 {
		return e
	}
	if sp.is(s, cNumber) { // \p{N}{1,3}
		e := s + 1
		for e < s+3 && sp.is(e, cNumber) {
			e++
		}
		return e
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n/]*'
	p := s
	if sp.rs[s] == ' ' {
		p++
	}
	if sp.symbol(p) {
		e := p
		for sp.symbol(e) {
			e++
		}
		for sp.newline(e) || e < sp.n && sp.rs[e] == '/' {
			e++
		}
		return e
	}
	if !sp.is(s, cSpace) {
		return -1
	}
	return sp.spaces(s)
}

// spaces is the end of the whitespace match at s: \s*[\r\n]+ up to the
// last line break of the run, else \s+(?!\S), the run less its last
// space unless the text ends, or \s+.
func (sp *splitter) spaces(s int) int {
	k := s
	for sp.is(k, cSpace) {
		k++
	}
	for j := k - 1; j >= s; j-- {
		if sp.newline(j) {
			return j + 1
		}
	}
	if k == sp.n || k-s < 2 {
		return k
	}
	return k - 1
}
