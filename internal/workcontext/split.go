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
	n := len(rs)
	cl := make([]uint8, n)
	for i, r := range rs {
		cl[i] = class(r)
	}
	is := func(i int, c uint8) bool { return i < n && cl[i]&c != 0 }
	newline := func(i int) bool { return i < n && (rs[i] == '\r' || rs[i] == '\n') }
	// other is [^\r\n\p{L}\p{N}].
	other := func(i int) bool { return i < n && !newline(i) && cl[i]&(cLetter|cNumber) == 0 }
	// contraction is the length of (?i:'s|'t|'re|'ve|'m|'ll|'d) at i, or 0.
	contraction := func(i int) int {
		if i+1 >= n || rs[i] != '\'' {
			return 0
		}
		switch rs[i+1] {
		case 's', 'S', 'ſ', 't', 'T', 'm', 'M', 'd', 'D':
			return 2
		}
		if i+2 < n {
			a, b := unicode.ToLower(rs[i+1]), unicode.ToLower(rs[i+2])
			if a == 'r' && b == 'e' || a == 'v' && b == 'e' || a == 'l' && b == 'l' {
				return 3
			}
		}
		return 0
	}
	// words tries the two letter alternatives at s; -1 when neither
	// matches.
	words := func(s int) int {
		for _, lead := range []int{1, 0} { // [^\r\n\p{L}\p{N}]? is greedy
			if lead == 1 && !other(s) {
				continue
			}
			p := s + lead
			k := p
			for is(k, cUpper) {
				k++
			}
			// Upper* Lower+: the longest Upper run that a Lower follows.
			j := k
			for j >= p && !is(j, cLower) {
				j--
			}
			if j >= p {
				e := j
				for is(e, cLower) {
					e++
				}
				return e + contraction(e)
			}
		}
		for _, lead := range []int{1, 0} {
			if lead == 1 && !other(s) {
				continue
			}
			p := s + lead
			k := p
			for is(k, cUpper) {
				k++
			}
			// Upper+ Lower*.
			if k > p {
				for is(k, cLower) {
					k++
				}
				return k + contraction(k)
			}
		}
		return -1
	}
	match := func(s int) int {
		if e := words(s); e >= 0 {
			return e
		}
		if is(s, cNumber) { // \p{N}{1,3}
			e := s + 1
			for e < s+3 && is(e, cNumber) {
				e++
			}
			return e
		}
		// ' ?[^\s\p{L}\p{N}]+[\r\n/]*'
		symbol := func(i int) bool { return i < n && cl[i]&(cSpace|cLetter|cNumber) == 0 }
		p := s
		if rs[s] == ' ' {
			p++
		}
		if symbol(p) {
			e := p
			for symbol(e) {
				e++
			}
			for newline(e) || e < n && rs[e] == '/' {
				e++
			}
			return e
		}
		if !is(s, cSpace) {
			return -1
		}
		k := s
		for is(k, cSpace) {
			k++
		}
		// \s*[\r\n]+: up to the last line break of the run.
		for j := k - 1; j >= s; j-- {
			if newline(j) {
				return j + 1
			}
		}
		// \s+(?!\S): the run, less its last space unless the text ends.
		if k == n || k-s < 2 {
			return k // or \s+
		}
		return k - 1
	}
	for s := 0; s < n; {
		e := match(s)
		if e < 0 {
			s++
			continue
		}
		piece(s, e)
		s = e
	}
}
