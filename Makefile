# orchestrate: build, test, demo, bench, fuzz. `make help` lists the targets.
GO      ?= go
BIN     := bin/orchestrate
FUZZTIME ?= 20s

.PHONY: all assets build test demo bench fuzz check mutate help

all: build

help:
	@echo "make build   build bin/orchestrate"
	@echo "make test    vet, gofmt check, and every test with -race"
	@echo "make demo    the offline demo: a fix, a retry, a halt, the analytics"
	@echo "make bench   run the benchmarks"
	@echo "make fuzz    run each fuzz target for FUZZTIME ($(FUZZTIME))"
	@echo "make check   test, then fuzz"
	@echo "make mutate  run the mutants of mutation/mutants.txt: killed/total (MUTANTS=regexp for some)"

# The pinned echarts script, fetched from the npm registry and embedded in
# the binary so that analytics.html draws its charts offline.
assets:
	@sh analytics/assets/fetch-echarts.sh || echo "make: echarts not fetched (npm needed): analytics.html will load it from a CDN; its tables show either way" >&2

build: assets
	$(GO) build -o $(BIN) ./cmd/orchestrate

test: assets
	$(GO) vet ./...
	@test -z "$$(gofmt -l .)" || { echo "gofmt would change:"; gofmt -l .; exit 1; }
	$(GO) test -race -count=1 ./...

# orchestrate run on a bundled tiny project with a scripted agent, offline,
# in a new temporary directory that is kept for you to look at.
demo: build
	@$(BIN) demo

bench: assets
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Minimizing each new input for at most a second keeps a short -fuzztime
# from ending in the middle of one ("context deadline exceeded").
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 1s $$pkg; \
	  done; \
	done

check: test fuzz

# Each mutant of mutation/mutants.txt applied to a scratch copy of the tree
# and tested against its packages; fails when one survives or no longer
# fits the code. Long (the command-line scenarios run for some): not in CI.
MUTANTS ?=
mutate: assets
	python3 mutation/mutate.py -only '$(MUTANTS)'
