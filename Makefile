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

bench: setup
	$(SWIFT) build -c release -Xswiftc -static-stdlib --product crescent
	$(SWIFT) build -c release --product crescent-bench
	.build/release/crescent-bench $(BENCH_ARGS)

clean:
	rm -rf .build
