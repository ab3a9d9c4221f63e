# Crescent: the two quick-start commands are `make run` and `make test`.
SWIFT ?= swift
SCRIPT ?= scripts/tracker.lua
RUN_ARGS ?= --location gpx:scripts/tracks/paris.gpx@60x
BENCH_ARGS ?=

.PHONY: all setup build run test bench clean

all: build

setup:
	@tools/setup.sh

build: setup
	$(SWIFT) build

run: build
	$(SWIFT) build --product crescent
	.build/debug/crescent $(RUN_ARGS) $(SCRIPT)

# The suite runs in phases so that nothing starves on a 2-core machine: the CPU-heavy reliability
# tests (a million subscriptions, ten thousand controllers) run one at a time and apart from tests
# that wait on real loops, Swift tasks, processes and services (signals, --timeout, gpsd, SQLite).
HEAVY_TESTS = BindingReliabilityTests|ControllerOwnershipTests
test: setup
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --filter "LuaBridgeTests|ModelTests|REPLTests"
	$(SWIFT) test --skip-build --filter CrescentKitTests --skip "$(HEAVY_TESTS)"
	$(SWIFT) test --skip-build --no-parallel --filter "$(HEAVY_TESTS)"
	$(SWIFT) test --skip-build --filter ServicesTests
	$(SWIFT) test --skip-build --filter crescentTests

# The geocoder rows compare against PyPI's reverse_geocoder 1.5.1 (with numpy and scipy), installed
# for python3 here when missing; nothing else needs it.
# One set of flags for both products, so nothing is compiled twice.
bench: setup
	@python3 -c 'import reverse_geocoder' 2>/dev/null || python3 -m pip install --quiet reverse_geocoder==1.5.1
	$(SWIFT) build -c release -Xswiftc -static-stdlib --product crescent
	$(SWIFT) build -c release -Xswiftc -static-stdlib --product crescent-bench
	.build/release/crescent-bench $(BENCH_ARGS)

clean:
	rm -rf .build
