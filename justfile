# awr development recipes. Each is a plain go command you can run without just.

# Build static, trimmed binaries of awr and awr-mcp into bin/ (no cgo: SQLite is pure Go).
build:
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o bin/ ./cmd/awr ./cmd/awr-mcp

# Run the test suite.
test:
    go test ./...

# Run the test suite under the race detector.
test-race:
    go test -race ./...

# Check formatting and vet.
lint:
    test -z "$(gofmt -l .)"
    go vet ./...

# Run the benchmarks (the 1M-event log is generated once, about three minutes on 2 cores, and cached).
bench:
    go test -run '^$' -bench . -benchtime 1x ./internal/lab/bench

# Fuzz every decoder for the given time each.
fuzz time="30s":
    go test -run '^$' -fuzz '^FuzzDecodePayload$' -fuzztime {{time}} ./events
    go test -run '^$' -fuzz '^FuzzDecodeEnvelopeLine$' -fuzztime {{time}} ./replay
    go test -run '^$' -fuzz '^FuzzImport$' -fuzztime {{time}} ./replay
    go test -run '^$' -fuzz '^FuzzParseSpec$' -fuzztime {{time}} ./internal/rig
    go test -run '^$' -fuzz '^FuzzCanonicalCompact$' -fuzztime {{time}} ./events
    go test -run '^$' -fuzz '^FuzzReadManifest$' -fuzztime {{time}} ./internal/intake
    go test -run '^$' -fuzz '^FuzzWriteManifest$' -fuzztime {{time}} ./internal/intake
    go test -run '^$' -fuzz '^FuzzFind$' -fuzztime {{time}} ./internal/secret
    go test -run '^$' -fuzz '^FuzzToolArguments$' -fuzztime {{time}} ./internal/serve/mcpserver
    go test -run '^$' -fuzz '^FuzzParse$' -fuzztime {{time}} ./internal/hosts
    go test -run '^$' -fuzz '^FuzzInstall$' -fuzztime {{time}} ./internal/hosts
    for t in FuzzChecklist FuzzTable FuzzHeadings FuzzGoals FuzzRules FuzzPlan FuzzYAMLLedger; do go test -run '^$' -fuzz "^$t\$" -fuzztime {{time}} ./internal/intake/source; done

# Run the scripted handoff on a temporary project.
demo:
    go run ./cmd/awr demo
