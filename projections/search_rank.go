package projections

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"zombiezen.com/go/sqlite"
)

// Search's rank (issue #44: a search over 10,000 items costs at most
// twice the same over 150, and history costs what it cost).
//
// A query of plain words scores a document version by the sum over its
// words of idf(word)·impact(word, version). The impact is the version's
// BM25 term for the word with a fixed reference length where FTS5's
// bm25 takes the index's average, in millionths (an integer: ties are
// exact),
//
//	impact = round(10⁶ · f·(k1+1) / (f + k1·(1 − b + b·len/searchRefLen)))
//
// (searchImpact) with f the word's occurrences (a title's counting
// twice), len the version's words, k1 = 1.2, b = 0.75: it depends on the
// version alone. A word's weight is its rarity among the work items'
// open versions, the register:
//
//	idf = ln(1 + (N − n + 0.5) / (n + 0.5))
//
// N the open work items and n those holding the word (p_search_df, kept
// as the register changes; a word no item holds weighs most). Of two
// equal scores the newer version (the greater id) comes first.
//
// What a 10,000-item register multiplies is ranked ahead: the open work
// items' words are kept with their impacts (p_search_term, written as an
// item's version opens, removed as it closes; a rebuild writes them at
// its end), indexed by word best first. searchHead reads the rarest
// word's rows in that order, looks the other words up in each row's
// version, and stops once the best limit scores found beat what any row
// still unread could score (Fagin's threshold algorithm, exact). What
// grows with history (checkpoints, loops, decisions, facts, hypotheses,
// executions, closed versions) is not kept: those a query matches are
// scored when it runs (scoreMatches), f read from FTS5's own highlight
// of each word and len from its document sizes, by the same formula, so
// the two merge into one exact order. A write to history costs what it
// cost before.

// searchRefLen is the reference length of a document (in words) in the
// impact's length normalization.
const searchRefLen = 24

// searchImpactScale is the unit of an impact: millionths.
const searchImpactScale = 1e6

// searchTerms returns the words of an FTS5 query made by FTSQuery when
// each is a plain word (ASCII letters and digits, no prefix), folded as
// the index folds them; nil otherwise (a prefix, punctuation inside
// quotes, a letter beyond ASCII: FTS5's bm25 ranks those).
func searchTerms(q string) []string {
	var out []string
	for _, t := range strings.Fields(q) {
		if len(t) < 3 || t[0] != '"' || t[len(t)-1] != '"' {
			return nil
		}
		w := t[1 : len(t)-1]
		for i := 0; i < len(w); i++ {
			c := w[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				return nil
			}
		}
		out = append(out, strings.ToLower(w))
	}
	return out
}

// searchImpact is the impact of a word f times in a version of n words
// (a title's counting twice in f), in millionths.
func searchImpact(f, n int) int64 {
	const k1, b = 1.2, 0.75
	ff := float64(f)
	return int64(math.Round(searchImpactScale * ff * (k1 + 1) / (ff + k1*(1-b+b*float64(n)/searchRefLen))))
}

// putSearchTermDoc writes the words of a work item's open version id
// with their impacts, as one JSON object (p_search_term_doc), and counts
// its words in df when set; its rows of p_search_term and its counts
// follow (search.flushTerms).
func putSearchTermDoc(conn *sqlite.Conn, id int64, title, body string, df map[string]int64) error {
	raw, err := searchImpacts(conn, title, body, df)
	if err != nil {
		return err
	}
	return exec(conn, "search_term_doc_insert", func(st *sqlite.Stmt) {
		st.SetInt64(":id", id)
		st.SetText(":impacts", raw)
	})
}

// searchImpacts is the JSON object of a version's words and impacts;
// each word is counted in df when set.
func searchImpacts(conn *sqlite.Conn, title, body string, df map[string]int64) (string, error) {
	f, n, err := searchWords(conn, title, body)
	if err != nil {
		return "", err
	}
	impacts := make(map[string]int64, len(f))
	for t, c := range f {
		impacts[t] = searchImpact(c, n)
		if df != nil {
			df[t]++
		}
	}
	raw, err := json.Marshal(impacts) // keys sorted: rows in the key's order
	return string(raw), err
}

// dropSearchTerms removes version id's words and its counts (it left
// the head), after writing those pending.
func (p *search) dropSearchTerms(conn *sqlite.Conn, id int64) error {
	if err := p.flushTerms(conn); err != nil {
		return err
	}
	for _, name := range []string{"search_df_sub", "search_df_drop", "search_term_delete", "search_term_doc_delete"} {
		if err := exec(conn, name, func(st *sqlite.Stmt) { st.SetInt64(":id", id) }); err != nil {
			return err
		}
	}
	return nil
}

// fillSearchTerms writes, at the end of a rebuild, the words of every
// work item's open version and the register's counts: what incremental
// apply leaves.
func fillSearchTerms(conn *sqlite.Conn) error {
	err := query(conn, "search_open_work", func(*sqlite.Stmt) {}, func(st *sqlite.Stmt) error {
		return putSearchTermDoc(conn, st.GetInt64("id"), st.GetText("title"), st.GetText("body"), nil)
	})
	if err != nil {
		return fmt.Errorf("the open work items' words: %w", err)
	}
	if err := exec(conn, "search_term_fill", func(*sqlite.Stmt) {}); err != nil {
		return err
	}
	return exec(conn, "search_df_fill", func(*sqlite.Stmt) {})
}

// searchWords is each word of a version's title and body with its count
// (a title's counting twice), and the version's words, as the index's
// tokenizer (FTS5's unicode61, diacritics removed) reads them: in Go for
// ASCII text (a word is a run of letters and digits, folded to lower
// case), through the tokenizer table otherwise.
func searchWords(conn *sqlite.Conn, title, body string) (map[string]int, int, error) {
	f := map[string]int{}
	n := 0
	for _, part := range [2]struct {
		text   string
		weight int
	}{{title, 2}, {body, 1}} {
		start := -1
		for i := 0; i <= len(part.text); i++ {
			var c byte
			if i < len(part.text) {
				c = part.text[i]
			}
			if c >= 0x80 {
				return tokenizedWords(conn, title, body)
			}
			word := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
			switch {
			case word && start < 0:
				start = i
			case !word && start >= 0:
				f[strings.ToLower(part.text[start:i])] += part.weight
				n++
				start = -1
			}
		}
	}
	return f, n, nil
}

// tokenizedWords is searchWords through the tokenizer table: the text put
// in, its words read back, the table emptied.
func tokenizedWords(conn *sqlite.Conn, title, body string) (map[string]int, int, error) {
	if err := exec(conn, "search_tok_put", func(st *sqlite.Stmt) {
		st.SetText(":title", title)
		st.SetText(":body", body)
	}); err != nil {
		return nil, 0, err
	}
	f := map[string]int{}
	n := 0
	if err := query(conn, "search_tok_words", func(*sqlite.Stmt) {}, func(st *sqlite.Stmt) error {
		f[st.GetText("term")] = int(st.GetInt64("f"))
		n += int(st.GetInt64("c"))
		return nil
	}); err != nil {
		return nil, 0, err
	}
	return f, n, exec(conn, "search_tok_clear", func(*sqlite.Stmt) {})
}

// searchIDF is each word's weight, in the order of terms, and how many
// open work items hold each.
func searchIDF(conn *sqlite.Conn, terms []string) ([]float64, []int64, error) {
	count := func(term string) (int64, error) {
		var n int64
		err := query(conn, "search_term_docs", func(st *sqlite.Stmt) { st.SetText(":term", term) }, func(st *sqlite.Stmt) error {
			n = st.GetInt64("n")
			return nil
		})
		return n, err
	}
	n, err := count("")
	if err != nil {
		return nil, nil, err
	}
	idf := make([]float64, len(terms))
	docs := make([]int64, len(terms))
	for i, t := range terms {
		if docs[i], err = count(t); err != nil {
			return nil, nil, err
		}
		idf[i] = math.Log(1 + (float64(n)-float64(docs[i])+0.5)/(float64(docs[i])+0.5))
	}
	return idf, docs, nil
}

// rankedHit is a version found, with its score; head marks a work
// item's open version (in p_search_head_fts).
type rankedHit struct {
	id    int64
	score float64
	head  bool
}

// compareRanked orders hits best first: the higher score, then the
// newer version.
func compareRanked(a, b rankedHit) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	return cmp.Compare(b.id, a.id)
}

// scoreOf is the score of impacts under idf, summed in the words' order
// (the same sum wherever a score is made: equal scores are equal).
func scoreOf(idf []float64, impacts []int64) float64 {
	score := 0.0
	for i := range idf {
		score += idf[i] * float64(impacts[i])
	}
	return score
}

// impactOf is the impact of term in open work version id, false when it
// does not hold the word.
func impactOf(conn *sqlite.Conn, id int64, term string) (int64, bool, error) {
	var v int64
	found := false
	err := query(conn, "search_term_of", func(st *sqlite.Stmt) {
		st.SetInt64(":id", id)
		st.SetText(":term", term)
	}, func(st *sqlite.Stmt) error {
		v, found = st.GetInt64("impact"), true
		return nil
	})
	return v, found, err
}

// errStop ends a query's walk early.
var errStop = errors.New("stop")

// searchHead finds the best limit open work versions holding every one
// of terms by the threshold algorithm over p_search_term, best first.
func searchHead(conn *sqlite.Conn, terms []string, limit int) ([]rankedHit, error) {
	idf, docs, err := searchIDF(conn, terms)
	if err != nil {
		return nil, err
	}
	// The rarest word drives; each other word's best impact bounds what
	// it can add to a row not yet read.
	drive := 0
	for i := range terms {
		if docs[i] == 0 {
			return nil, nil // a word no open work item holds
		}
		if docs[i] < docs[drive] {
			drive = i
		}
	}
	best := make([]int64, len(terms))
	for i, t := range terms {
		if i == drive {
			continue
		}
		if err := query(conn, "search_term_rank", func(st *sqlite.Stmt) { st.SetText(":term", t) }, func(st *sqlite.Stmt) error {
			best[i] = st.GetInt64("impact")
			return errStop
		}); err != nil && !errors.Is(err, errStop) {
			return nil, err
		}
	}
	var top []rankedHit
	impacts := make([]int64, len(terms))
	bounds := make([]int64, len(terms))
	err = query(conn, "search_term_rank", func(st *sqlite.Stmt) { st.SetText(":term", terms[drive]) }, func(st *sqlite.Stmt) error {
		id, impact := st.GetInt64("id"), st.GetInt64("impact")
		if len(top) == limit {
			// What a row from here on can score at most: the page is final
			// once its last beats it. Of one word the rows come in rank
			// order: an equal score here is of an older version, which
			// the last beats too.
			copy(bounds, best)
			bounds[drive] = impact
			bound := scoreOf(idf, bounds)
			last := top[limit-1]
			if last.score > bound || len(terms) == 1 && last.score == bound && last.id > id {
				return errStop
			}
		}
		for i, t := range terms {
			if i == drive {
				impacts[i] = impact
				continue
			}
			v, ok, err := impactOf(conn, id, t)
			if err != nil || !ok {
				return err
			}
			impacts[i] = v
		}
		r := rankedHit{id: id, score: scoreOf(idf, impacts), head: true}
		if len(top) == limit && compareRanked(r, top[limit-1]) > 0 {
			return nil
		}
		at, _ := slices.BinarySearchFunc(top, r, compareRanked)
		top = slices.Insert(top, at, r)
		if len(top) > limit {
			top = top[:limit]
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, err
	}
	return top, nil
}

// scoreMatches scores every version visible at rev (of kind when set)
// that FTS5 matches with q, whose plain words are terms, in one index:
// the work items' open versions (p_search_head_fts) when head is set,
// the rest (p_search_fts) otherwise. Each version's f of a word is read
// from FTS5's highlight of the word (two marks an occurrence), its
// length from FTS5's document sizes: the words as the index reads them.
func scoreMatches(conn *sqlite.Conn, rev int64, q string, terms []string, kind string, head bool) ([]rankedHit, error) {
	index := "search_rest_"
	if head {
		index = "search_head_"
	}
	type found struct {
		titleLen, bodyLen int64
		words             int
		f                 []int
	}
	docs := map[int64]*found{}
	var ids []int64
	err := query(conn, index+"candidates_at", func(st *sqlite.Stmt) {
		st.SetText(":query", q)
		st.SetInt64(":rev", rev)
		st.SetText(":kind", kind)
	}, func(st *sqlite.Stmt) error {
		sizes := make([]byte, st.GetLen("sz"))
		st.GetBytes("sz", sizes)
		words, err := searchDocWords(sizes)
		if err != nil {
			return err
		}
		id := st.GetInt64("id")
		docs[id] = &found{titleLen: st.GetInt64("title_len"), bodyLen: st.GetInt64("body_len"), words: words, f: make([]int, len(terms))}
		ids = append(ids, id)
		return nil
	})
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	idf, _, err := searchIDF(conn, terms)
	if err != nil {
		return nil, err
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	for i, t := range terms {
		err := query(conn, index+"word_marks", func(st *sqlite.Stmt) {
			st.SetText(":query", `"`+t+`"`)
			st.SetText(":ids", string(list))
		}, func(st *sqlite.Stmt) error {
			d, ok := docs[st.GetInt64("id")]
			if ok {
				d.f[i] = int(st.GetInt64("title_len") - d.titleLen + (st.GetInt64("body_len")-d.bodyLen)/2) // a title counts twice
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]rankedHit, 0, len(ids))
	impacts := make([]int64, len(terms))
	for _, id := range ids {
		d := docs[id]
		for i := range terms {
			impacts[i] = searchImpact(d.f[i], d.words)
		}
		out = append(out, rankedHit{id: id, score: scoreOf(idf, impacts), head: head})
	}
	return out, nil
}

// searchDocWords is a version's words (title and body) from its row of
// FTS5's document sizes: a varint a column, in the index's column order.
func searchDocWords(sz []byte) (int, error) {
	total := 0
	for col := 0; col < 2; col++ {
		v, n := sqliteVarint(sz)
		if n == 0 {
			return 0, fmt.Errorf("search: a document size of %d bytes holds no column %d", len(sz), col)
		}
		total += int(v)
		sz = sz[n:]
	}
	return total, nil
}

// sqliteVarint decodes SQLite's varint (big-endian, 7 bits a byte, the
// ninth byte whole) from b: its value and length, 0 when b is short.
func sqliteVarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b); i++ {
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// searchPage reads each of hits (a page, by id and score) with its
// document and its snippet (FTS5's, of the query q), in their order.
func searchPage(conn *sqlite.Conn, q string, hits []rankedHit) ([]SearchHit, error) {
	out := make([]SearchHit, len(hits))
	if len(hits) == 0 {
		return out, nil
	}
	ids := make([]int64, len(hits))
	at := map[int64]int{}
	for i, h := range hits {
		ids[i] = h.id
		at[h.id] = i
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	found := 0
	err = query(conn, "search_page_rows", func(st *sqlite.Stmt) { st.SetText(":ids", string(list)) }, func(st *sqlite.Stmt) error {
		i := at[st.GetInt64("id")]
		found++
		out[i] = SearchHit{Kind: st.GetText("kind"), Ref: st.GetText("ref"), Work: st.GetText("work"), SessionID: st.GetText("session_id"),
			State: st.GetText("state"), Seq: st.GetInt64("seq"), Title: st.GetText("title"), Score: hits[i].score / searchImpactScale}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if found != len(hits) {
		return nil, fmt.Errorf("search: %d of the page's %d versions not found", len(hits)-found, len(hits))
	}
	// The snippets from each full-text index alone: its matches are read
	// (a doclist), the rows of the page's versions alone.
	for _, index := range []string{"search_rest_snippets", "search_head_snippets"} {
		var of []int64
		for _, h := range hits {
			if h.head == (index == "search_head_snippets") {
				of = append(of, h.id)
			}
		}
		if len(of) == 0 {
			continue
		}
		list, err := json.Marshal(of)
		if err != nil {
			return nil, err
		}
		if err := query(conn, index, func(st *sqlite.Stmt) {
			st.SetText(":query", q)
			st.SetText(":ids", string(list))
		}, func(st *sqlite.Stmt) error {
			out[at[st.GetInt64("id")]].Snippet = st.GetText("snippet")
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return out, nil
}
