package workcontext

import (
	"runtime/debug"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// Tokenizer is the encoding token counts use. Its tables are embedded in
// the binary: nothing is downloaded at run time.
const Tokenizer = "o200k_base"

var (
	encOnce sync.Once
	enc     tokenizer.Codec
	encErr  error
)

// Count returns the number of o200k_base tokens in text.
func Count(text string) (int, error) {
	Warm()
	if encErr != nil {
		return 0, encErr
	}
	ids, _, err := enc.Encode(text)
	return len(ids), err
}

// Warm loads the o200k_base tables (about 14 ms on this project's 2-core
// machine) so that a caller can overlap it with other start-up work, such
// as opening the project: call `go workcontext.Warm()` early.
func Warm() {
	encOnce.Do(func() {
		// Building the 200,000-entry table allocates a lot at once; a
		// collection in the middle of it only slows a short-lived process.
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
		enc, encErr = tokenizer.Get(tokenizer.O200kBase)
	})
}
