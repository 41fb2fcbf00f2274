# sharenote: every target loops over the modules of go.work, because `go test ./...`
# does not span a workspace.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

MODULES := $(shell go list -m -f '{{.Dir}}')
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/sharenote/sharenote/libs/app.Version=$(VERSION)
TOOLS := $(CURDIR)/.tools
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(TOOLS)/staticcheck-$(STATICCHECK_VERSION)
UNPARAM_VERSION := v0.0.0-20260823230713-2fa3d841b0c8
UNPARAM := $(TOOLS)/unparam-$(UNPARAM_VERSION)
# The tests' throw-away S3 server; libs/testkit finds it here (or through this variable).
MINIO_VERSION := v0.0.0-20260212201848-7aac2a2c5b7c
MINIO := $(TOOLS)/minio-$(MINIO_VERSION)
export SHARE_TEST_MINIO_BIN := $(MINIO)

.PHONY: help run build test e2e chaos bench images compose-smoke lint minio fmt tidy clean

help: ## Show the targets.
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

run: build ## Build and serve the whole API on the embedded default (SQLite, in-process limits).
	./bin/sharenote serve

build: ## Build the one binary, bin/sharenote (every target and command).
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o bin/sharenote ./services/sharenote/cmd/sharenote

test: $(MINIO) ## Run every test of every module against real Postgres, Redis and MinIO.
	@failed=""; for m in $(MODULES); do \
		echo "== $$m"; \
		(cd $$m && go test -count=1 ./...) || failed="$$failed $$m"; \
	done; \
	if [ -n "$$failed" ]; then echo "FAILED:$$failed"; exit 1; fi
	@$(MAKE) --no-print-directory e2e

e2e: $(MINIO) ## The five services as separate processes behind nginx, end to end on Postgres, Redis and MinIO.
	cd services/sharenote && go test -count=1 -tags e2e -run E2E -v .

chaos: $(MINIO) ## Fault tests on throw-away Postgres and Redis: outages under load, slow bodies, big uploads, SIGTERM.
	cd services/sharenote && go test -count=1 -tags chaos -run Chaos -v -timeout 20m .

bench: $(MINIO) ## Micro-benchmarks, then load benchmarks vs bare handlers on Postgres + Redis + MinIO (table; load part ~3 min).
	@for m in $(MODULES); do \
		(cd $$m && go test -run '^$$' -bench . -benchmem -benchtime 100x ./... | grep -E '^(Benchmark|ok|FAIL|---)'); \
	done
	@# The load benchmarks print their table at the end; LOADBENCH_ROWS=0 skips the 1M-row scale run.
	cd services/sharenote && go test -count=1 -tags loadbench -run LoadBench -v -timeout 30m .

CONTAINER ?= docker
BASE_IMAGE ?= gcr.io/distroless/static-debian12:nonroot

images: ## Build the one image, sharenote:<version> (and :latest), from services/Dockerfile.
	$(CONTAINER) build -f services/Dockerfile --build-arg VERSION=$(VERSION) --build-arg BASE_IMAGE=$(BASE_IMAGE) \
		-t sharenote:$(VERSION) -t sharenote:latest .

compose-smoke: ## docker-compose.yaml's images and services in podman, with the e2e flow (or one skip line).
	.ci/compose-smoke

# The tagged tests (e2e, chaos, load benchmarks) are checked with everything else.
LINT_TAGS := e2e,chaos,loadbench

lint: $(STATICCHECK) $(UNPARAM) ## gofmt, go vet, staticcheck and unparam on every module, tagged tests included.
	@out=$$(gofmt -l libs services charts); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@for m in $(MODULES); do (cd $$m && go vet -tags $(LINT_TAGS) ./... && $(STATICCHECK) -tags $(LINT_TAGS) ./... && $(UNPARAM) ./...); done

$(STATICCHECK):
	@mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv $(TOOLS)/staticcheck $@

# unparam reports parameters and results no caller uses.
$(UNPARAM):
	@mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) GOWORK=off GOFLAGS=-mod=mod go install mvdan.cc/unparam@$(UNPARAM_VERSION)
	mv $(TOOLS)/unparam $@

minio: $(MINIO) ## Build the pinned MinIO server the tests start (once; ~150 MB, a few minutes).

$(MINIO):
	@mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) GOWORK=off GOFLAGS=-mod=mod go install github.com/minio/minio@$(MINIO_VERSION)
	mv $(TOOLS)/minio $@

fmt: ## Format the Go code.
	gofmt -w libs services charts

tidy: ## go mod tidy in every module.
	@for m in $(MODULES); do (cd $$m && go mod tidy); done

clean: ## Remove binaries, tools and the embedded default's data.
	rm -rf bin .tools .data
