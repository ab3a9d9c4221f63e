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

test: setup
	$(SWIFT) build
	$(SWIFT) test

# One set of flags for both products, so nothing is compiled twice.
bench: setup
	$(SWIFT) build -c release -Xswiftc -static-stdlib --product crescent
	$(SWIFT) build -c release -Xswiftc -static-stdlib --product crescent-bench
	.build/release/crescent-bench $(BENCH_ARGS)

clean:
	rm -rf .build
