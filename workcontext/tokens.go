package workcontext

// Tokenizer is the encoding token counts use. Its vocabulary is embedded in
// the binary: nothing is downloaded, built or cached at run time.
const Tokenizer = "o200k_base"

// Count returns the number of o200k_base tokens in text, exactly as the
// tiktoken-go/tokenizer library counts them (TestRankTable_MatchesLibrary).
// It fails only if the embedded table is damaged or the split rule fails
// on text.
func Count(text string) (int, error) {
	t, err := table()
	if err != nil {
		return 0, err
	}
	return t.count(text)
}

// Warm compiles what counting needs (the pre-tokenization rule, well under
// a millisecond) so that a caller can overlap it with other start-up work:
// call `go workcontext.Warm()` early.
func Warm() { _, _ = table() }
