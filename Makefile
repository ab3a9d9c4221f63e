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

# Three phases. Services read time through the host's clock, so the unit suites of every target
# run together on their manual clocks. Apart from them: the CPU-heavy reliability tests (a
# million subscriptions, ten thousand controllers), one at a time, and the end-to-end tests, which
# run the real binary against real time (signals, --timeout, gpsd, processes sharing a store) and
# would starve on 2 cores beside the rest.
HEAVY_TESTS = BindingReliabilityTests|ControllerOwnershipTests
test: setup
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --filter "LuaBridgeTests|ModelTests|REPLTests|CrescentKitTests|ServicesTests" --skip "$(HEAVY_TESTS)"
	$(SWIFT) test --skip-build --no-parallel --filter "$(HEAVY_TESTS)"
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
