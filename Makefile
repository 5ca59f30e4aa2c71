# orchestrate: build, test, demo, bench, fuzz. `make help` lists the targets.
GO      ?= go
BIN     := bin/orchestrate
FUZZTIME ?= 20s

# The linters, pinned: go run fetches each once into the module cache (not
# into go.mod), and runs it offline from there after.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
DEADCODE    := golang.org/x/tools/cmd/deadcode@v0.52.0

.PHONY: all assets build lint test demo bench fuzz check mutate help

all: build

help:
	@echo "make build   build bin/orchestrate"
	@echo "make test    vet, gofmt check, lint, and every test with -race"
	@echo "make lint    staticcheck, and deadcode: no function that no command reaches"
	@echo "make demo    the offline demo: a fix, a retry, a halt, the analytics"
	@echo "make bench   run the benchmarks"
	@echo "make fuzz    run each fuzz target for FUZZTIME ($(FUZZTIME))"
	@echo "make check   test, then fuzz"
	@echo "make mutate  run the mutants of mutation/mutants.txt: killed/total (MUTANTS=regexp for some)"
	@echo "make assets  rebuild the pinned echarts after a change of its pins or parts (npm)"

# The pinned echarts build is committed in analytics/assets/ and embedded by
# every build; this target only checks it, or with npm rebuilds it after a
# change of its pins or parts in build-echarts.sh and echarts-entry.js (see
# analytics/assets/README.md).
assets:
	sh analytics/assets/build-echarts.sh
	cd analytics/assets && sha256sum -c echarts.min.js.sha256

# A static binary (no cgo): no C library to load at each start, and some
# 2 MB less resident memory for a command that lives (the MCP server).
build:
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/orchestrate

# deadcode lists the functions the command (the module's one main package)
# never reaches, those only tests call among them; it exits 0 either way.
lint:
	$(GO) run $(STATICCHECK) ./...
	@out="$$($(GO) run $(DEADCODE) ./...)" || exit 1; \
	test -z "$$out" || { echo "deadcode: functions no command reaches:"; echo "$$out"; exit 1; }

test:
	$(GO) vet ./...
	@test -z "$$(gofmt -l .)" || { echo "gofmt would change:"; gofmt -l .; exit 1; }
	@$(MAKE) --no-print-directory lint
	$(GO) test -race -count=1 -timeout 45m ./...

# orchestrate run on a bundled tiny project with a scripted agent, offline,
# in a new temporary directory that is kept for you to look at.
demo: build
	@$(BIN) demo

# The hot-path benchmarks run the built command: it is built first, and put
# first on PATH. One package at a time (-p 1): the benchmarks compare CPU
# times, which another package's benchmarks running beside them would swell.
bench:
	@bin=$$(mktemp -d) && CGO_ENABLED=0 $(GO) build -o $$bin/orchestrate ./cmd/orchestrate && \
	  PATH=$$bin:$$PATH $(GO) test -p 1 -timeout 60m -run '^$$' -bench . -benchmem ./...; \
	  rc=$$?; rm -rf $$bin; exit $$rc

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
