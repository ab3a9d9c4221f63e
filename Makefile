# Crescent: the two quick-start commands are `make run` and `make test`.
SWIFT ?= swift
SCRIPT ?= scripts/hello.lua
BENCH_ARGS ?=

.PHONY: all setup build run test bench clean

all: build

setup:
	@tools/setup.sh

build: setup
	$(SWIFT) build

run: build
	$(SWIFT) build --product crescent
	.build/debug/crescent $(SCRIPT)

# The end-to-end tests time real processes (signals, --timeout); they run on their own so the
# CPU-heavy in-process tests (a million subscriptions) cannot starve them on a 2-core machine.
test: setup
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --skip crescentTests
	$(SWIFT) test --skip-build --filter crescentTests

# One set of flags for both products, so nothing is compiled twice.
bench: setup
	$(SWIFT) build -c release -Xswiftc -static-stdlib --product crescent
	$(SWIFT) build -c release -Xswiftc -static-stdlib --product crescent-bench
	.build/release/crescent-bench $(BENCH_ARGS)

clean:
	rm -rf .build
