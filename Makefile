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
	@echo "make assets  re-fetch the pinned echarts after a version change (npm)"

# The pinned echarts script is committed in analytics/assets/ and embedded by
# every build; this target only checks it, or with npm re-fetches it after a
# version change in fetch-echarts.sh (see analytics/assets/README.md).
assets:
	sh analytics/assets/fetch-echarts.sh
	cd analytics/assets && sha256sum -c echarts.min.js.sha256

build:
	$(GO) build -o $(BIN) ./cmd/orchestrate

test:
	$(GO) vet ./...
	@test -z "$$(gofmt -l .)" || { echo "gofmt would change:"; gofmt -l .; exit 1; }
	$(GO) test -race -count=1 ./...

# orchestrate run on a bundled tiny project with a scripted agent, offline,
# in a new temporary directory that is kept for you to look at.
demo: build
	@$(BIN) demo

bench:
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
mutate:
	python3 mutation/mutate.py -only '$(MUTANTS)'
