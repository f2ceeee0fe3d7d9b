# awr development recipes. Each is a plain go command.

test:
    go test ./...

test-race:
    go test -race ./...

lint:
    test -z "$(gofmt -l .)"
    go vet ./...

bench:
    go test -run '^$' -bench . -benchtime 1x ./...

fuzz seconds="10s":
    for t in FuzzDecodePayload FuzzDecodeEnvelopeLine; do go test -run '^$' -fuzz "^$t\$" -fuzztime {{seconds}} ./events ./replay 2>/dev/null || true; done

demo:
    go run ./cmd/awr demo
