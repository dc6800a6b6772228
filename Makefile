# Vigia — build, test and gate. `make check` is the gate CI runs.
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
SHA      ?= $(shell git rev-parse --short=7 HEAD 2>/dev/null || echo 0000000)
LDFLAGS  := -X main.version=$(VERSION) -X main.buildSHA=$(SHA)
PKGS     := ./...
# The DuckDB connector (cgo, ~70 MB) is built only with this tag: the served binary has it,
# and the gate compiles and runs its packages (and the DuckDB tests of app and cmd/vigia) with it too.
DUCKDB_TAGS := -tags duckdb
DUCKDB_PKGS := ./source/connect/duckdb/... ./rulesql/ ./lineage/sqllineage/duckview/

.PHONY: build demo run test race lint fmt vet staticcheck verify generate bench check clean

build: ## build bin/vigia
	$(GO) build $(DUCKDB_TAGS) -ldflags "$(LDFLAGS)" -o bin/vigia ./cmd/vigia

demo: build ## run the service with demo data on the local Postgres
	./bin/vigia serve --demo

run: build
	./bin/vigia serve

test: ## all tests with the race detector
	$(GO) test -race -count=1 -timeout 30m $(PKGS)
	$(GO) test -race -count=1 -timeout 30m $(DUCKDB_TAGS) $(DUCKDB_PKGS)
	$(GO) test -count=1 -timeout 30m $(DUCKDB_TAGS) -run 'DuckDB' ./app ./cmd/vigia

lint: fmt vet staticcheck

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^graph/generated/')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)
	$(GO) vet $(DUCKDB_TAGS) $(DUCKDB_PKGS) ./app ./cmd/vigia

staticcheck:
	$(GO) tool staticcheck $(PKGS)
	$(GO) tool staticcheck $(DUCKDB_TAGS) $(DUCKDB_PKGS)

generate: ## regenerate GraphQL code, the OpenAPI document client/openapi.json and the typed client
	$(GO) tool gqlgen generate
	$(GO) generate ./client

verify: ## fail when generated code, embedded assets or go.mod are stale
	$(GO) tool gqlgen generate
	@git diff --exit-code -- graph/generated graph/model || (echo "generated GraphQL code is stale: run make generate"; exit 1)
	$(GO) generate ./client
	@git diff --exit-code -- client || (echo "the OpenAPI document or the generated client is stale: run make generate"; exit 1)
	graph/explorer/build.sh --check
	ui/build.sh --check
	$(GO) mod tidy -diff

bench: ## benchmarks (figures go in the issue notes)
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

check: lint verify test ## the gate: gofmt, vet, staticcheck, stale-code checks, tests with -race

clean:
	rm -rf bin
