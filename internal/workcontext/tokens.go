package workcontext

// Tokenizer is the encoding token counts use. Its vocabulary is embedded in
// the binary: nothing is downloaded, built or cached at run time.
const Tokenizer = "o200k_base"

// Count returns the number of o200k_base tokens in text, exactly as the
// tiktoken-go/tokenizer library counts them (TestRankTable_MatchesLibrary).
// It fails only if the embedded table is damaged.
func Count(text string) (int, error) {
	t, err := table()
	if err != nil {
		return 0, err
	}
	return t.count(text), nil
}

// Warm checks the embedded table's header, the only start-up work counting
// has (a few comparisons, no allocation beyond the view): callers that
// start it early with `go workcontext.Warm()` may keep doing so.
func Warm() { _, _ = table() }
