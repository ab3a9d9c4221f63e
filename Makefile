# Crescent: the two quick-start commands are `make run` and `make test`.
SWIFT ?= swift
PREFIX ?= /usr/local
# One set of release flags for install and bench, so the two share one build. The static
# standard library's link arguments export every symbol of the binary (48,000 of them), which
# nothing of ours looks up and which the runtime's start-up path-finding (dladdr) scans at every
# launch: not exporting them takes about 8% off `crescent -e ''`. The release binary is linked
# by the toolchain's lld with packed relative relocations (DT_RELR, glibc 2.36+): gold wrote
# 142,000 of them as a 3.4 MB table the loader read and applied at every start; packed, they take
# 28 KB, and `crescent -e ''` runs 6% fewer instructions with 2.7 MB less peak memory.
# Every module (NIO's too) reaches the metadata of its concrete generic types through their
# accessors rather than by demangling their names at run time: a name's generic requirements
# (NIO's Selector<NIORegistration>, ManagedAtomic<UInt64>, Pool<PooledBuffer>) were checked by
# scanning all 10,000 protocol conformance records of the binary, six scans and a fifth of
# `crescent -e ''`'s instructions before the first line of a script ran (10.07 M -> 7.12 M).
# The binary is position-independent (PIE, as the toolchain links it by default), so the kernel
# loads it at a random address like its libraries, heap and stacks (ASLR): it parses HTTP, feeds,
# PostgreSQL's protocol and socket clients. Its relative relocations (packed, above) are applied
# at every start. It has no run path: SwiftPM's default, the binary's own folder ($ORIGIN), made
# the loader look for libm, libz and libc in that folder and each of its hardware-capability
# subfolders before its cache, at every start, for a binary that carries its Swift libraries inside.
RELEASE_FLAGS = -c release --disable-local-rpath -Xswiftc -static-stdlib -Xswiftc -use-ld=lld -Xlinker --no-export-dynamic \
	-Xlinker -z -Xlinker pack-relative-relocs \
	-Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors
SCRIPT ?= scripts/tracker.lua
RUN_ARGS ?= --location gpx:scripts/tracks/paris.gpx@60x
BENCH_ARGS ?=

.PHONY: all setup build run test bench clean install uninstall test-install fuzz sanitize

all: build

setup:
	@tools/setup.sh

build: setup
	$(SWIFT) build

run: build
	$(SWIFT) build --product crescent
	.build/debug/crescent $(RUN_ARGS) $(SCRIPT)

# Phases. Services read time through the host's clock, so the unit suites of every target
# run together on their manual clocks. Apart from them, one at a time: the CPU-heavy reliability
# tests (a million subscriptions, ten thousand controllers), the gpsd tests, which follow a real
# gpsd replaying in real time and miss its first fixes when the machine is saturated, and the two
# tests that wait on real devices and locks (an NMEA FIFO; another process holding SQLite's write
# lock), whose waits a saturated machine outlasts, and the keep-alive tests, whose closed
# connections went unnoticed for 5 s once in a full parallel run (not reproduced alone in
# repeated runs; cause not found), and the cross-connection store test, whose 1 s bound read
# 2.5 s in the parallel phase beside the geocoder's data loads, and the geocoder's suites, whose
# brute-force checks over the places data hold both of a 2-core machine's cooperative threads for
# tens of seconds (store and session scripts beside them stalled past their 20 s limits). Last, the end-to-end tests, which run the real
# binary against real time (signals, --timeout, processes sharing a store) and would starve on
# 2 cores beside the rest; then the specs of the shipped scripts; then make install, end to end;
# then each fuzz target for FUZZ_TEST_SECONDS from its seed corpus (make fuzz, below).
# The end-to-end tests come in three groups so that no group starves another on 2 cores: the
# script and REPL tests (signals, --timeout, live output) first, then the tests of plugins,
# remote control, the test runner and hardening, then one at a time those that load the machine
# on their own or time real programs (pty keyboard sessions, the process service's timeouts and
# descriptor counts, 100 plugin crash/restart cycles, 10,000 renders to a stalled client, 70 MiB
# of output to a client that does not read, 20 rounds of kill -9 against PostgreSQL, a
# 200,000-point GPX track made and replayed).
# Run in two parallel phases, the hardening suites and the others: on 2 cores all of them at once
# starved the timed tests (a listening host outlived its 30 s limit before the test stopped it).
PROCESS_HARDENING = Hardening
# In two phases, the plugins' suites and the rest: all at once on 2 cores starved their timed
# waits (a 0.1 s plugin check read 14 s; a host was stopped past its test's 30 s).
PROCESS_OTHERS_PLUGINS = PluginStartErrorTextTests|PluginGrantScopeTests|PluginGrantTests|PluginStoreTests|PluginManifestRulesTests|PluginGrantQuestionTests|PluginGrantFileTests|LuaPluginEscapeTests|ProcessPluginEscapeTests|PluginInstallTests|PluginSecondAttackTests|PluginSecondAttackInstallTests|PluginSecondAttackExecTests|PluginServiceAccessTests|LuaPluginTests|ShippedPluginTests
PROCESS_OTHERS_REST = ProcessFilesFourthAttackTests|RemoteKeyClientTests|SpecInteractionStateTests|JSONCodecAgreementTests|SpecHelperAttackTests|JSONRuleEverywhereTests|BustedSuiteTests|SpecRunnerAttackTests|TestCoverageTests|InitAndStubsCommandTests|TestCommandTests|RemoteAttachTests|RemoteControlTests|RemoteOutputBytesTests|ProcessLuaTests|StoreFileGoneTests|SpawnPolicyTests|ThreadLimitTests
PROCESS_OTHERS = $(PROCESS_OTHERS_PLUGINS)|$(PROCESS_OTHERS_REST)
PROCESS_TESTS = $(PROCESS_HARDENING)|$(PROCESS_OTHERS)
HEAVY_PROCESS_TESTS = KeyboardTerminalFourthAttackTests|KeyboardTerminalFourthAttackJobTests|PlainTerminalCommandTests|PlainTerminalEscapeTests|KeyboardTerminalThirdAttackTests|PluginGrantAnswerTests|HardeningPluginLifetimeTests|SpecOneStateTests|HardeningLaunchPathTests|KeyboardTerminalTypeAheadTests|KeyboardTerminalAttackTests|KeyboardTerminalSecondAttackTests|KeyboardTerminalRecheckTests|HardeningAutomationAttackTests|ProcessLaunchTests|HardeningTestInterruptTests|HardeningRunInterruptTests|HardeningAutomationRecheckTests|KeyboardTerminalTests|KeyboardTerminalBusyTests|KeyboardTerminalHintsTests|ReplTerminalTests|BackgroundHostTests|ProcessServiceTests|ProcessOutputBatchTests|ProcessPluginTests|RemoteBackPressureTests|RemoteOverflowDisconnectTests|StorePostgresProcessTests|GPXStreamingTests|ControllersFirstUseProcessTests
SERIAL_TESTS = BindingReliabilityTests|HTTPKeepAliveTests|ControllerOwnershipTests|GpsdTests|NMEAParserTests|StoreWritePathTests|FilesServiceTests|FilesWatchWalkTests|StoreCrossProcessTests|GeocoderTests|GeocoderSearchTests|GeocoderLoopTests
# Each phase runs under tools/reap.py: what a crashed test process leaves running (hosts, plugin
# processes, its PostgreSQL server) is stopped when the phase ends instead of outliving it.
REAP = python3 tools/reap.py
test: setup
	$(SWIFT) build --build-tests
	$(REAP) $(SWIFT) test --skip-build --filter "LuaBridgeTests|ModelTests|LineEditingTests|CrescentKitTests|ServicesTests" --skip "$(SERIAL_TESTS)|$(PROCESS_TESTS)|$(HEAVY_PROCESS_TESTS)"
	$(REAP) $(SWIFT) test --skip-build --no-parallel --filter "$(SERIAL_TESTS)"
	$(REAP) $(SWIFT) test --skip-build --filter crescentTests --skip "$(PROCESS_TESTS)|$(HEAVY_PROCESS_TESTS)"
	$(REAP) $(SWIFT) test --skip-build --filter "$(PROCESS_HARDENING)" --skip "$(HEAVY_PROCESS_TESTS)"
	$(REAP) $(SWIFT) test --skip-build --filter "$(PROCESS_OTHERS_PLUGINS)" --skip "$(HEAVY_PROCESS_TESTS)"
	$(REAP) $(SWIFT) test --skip-build --filter "$(PROCESS_OTHERS_REST)" --skip "$(HEAVY_PROCESS_TESTS)"
	$(REAP) $(SWIFT) test --skip-build --no-parallel --filter "$(HEAVY_PROCESS_TESTS)"
	$(REAP) .build/debug/crescent test spec
	@$(MAKE) --no-print-directory test-install
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_TEST_SECONDS)

# The unit suites (the first two phases of test) built and run under AddressSanitizer, then under
# ThreadSanitizer, each in a build folder of its own (.build-asan, .build-tsan) so neither
# recompiles the plain build. Slow: every module and dependency is compiled twice more.
# The suites are Swift Testing's only: the empty XCTest pass is not run (XCTest leaks its own
# suite objects, which LeakSanitizer would report). CRESCENT_SANITIZER names the sanitizer to the
# tests, so the few that measure time or memory skip that measurement (the sanitizers' slowdown
# and shadow memory, not our code, would decide it). Suppressions for reports in dependencies,
# each with the reason, are in tools/sanitizers/.
# The builds see CRESCENT_SANITIZER too: Package.swift then links libgcc shared, as the
# ThreadSanitizer test binary needs (why is there). The ThreadSanitizer build also defines
# THREAD_SANITIZER, under which `Mutex` is a pthread mutex whose hand-overs ThreadSanitizer sees
# (Model's SanitizedMutex says why); CLua installs the handler of its interrupt signal past
# ThreadSanitizer, which would hold the signal back from a Lua loop for ever (CLua/Shim/interrupt.c),
# and makes Lua's errors jump with a longjmp ThreadSanitizer follows (CLua/Shim/threadsanitizer.c).
# Anchored at the module: a bare `ModelTests` also matched crescentTests.HardeningNewcomerModelTests,
# an end-to-end suite.
UNIT_TESTS = ^(LuaBridgeTests|ModelTests|LineEditingTests|CrescentKitTests|ServicesTests)\.
# Run one at a time under a sanitizer, besides the serial phase's: the suites that run scripts on
# a real loop or wait on real programs and devices. Their Swift tasks share the test process's two
# cooperative threads with fixtures that block them (PostgreSQL's initdb, the geocoder's data);
# slowed down by the sanitizer, those held every such run past its time limit in the parallel
# phase. The process service's timeout tests are timed; in make test they run alone too.
SANITIZE_SERIAL_TESTS = $(SERIAL_TESTS)|AwaitTests|CompletionTests|LatestTests|OwnershipTests|LocationLuaTests|StoreLuaTests|GeocoderLuaTests|SessionLuaTests|GpsdLongLineTests|ProcessServiceTests|ProcessOutputBatchTests|ProcessLuaTests
SANITIZERS ?= address thread
SANITIZER_OPTIONS = LSAN_OPTIONS=suppressions=$(CURDIR)/tools/sanitizers/lsan.supp \
	TSAN_OPTIONS="suppressions=$(CURDIR)/tools/sanitizers/tsan.supp halt_on_error=0"
sanitize: setup
	@for sanitizer in $(SANITIZERS); do \
	    scratch=.build-$$(echo $$sanitizer | sed 's/address/asan/; s/thread/tsan/'); \
	    echo "== $$sanitizer sanitizer ($$scratch)"; \
	    CRESCENT_SANITIZER=$$sanitizer $(SWIFT) build --build-tests --scratch-path $$scratch \
	        --sanitize=$$sanitizer || exit 1; \
	    CRESCENT_SANITIZER=$$sanitizer $(SANITIZER_OPTIONS) $(REAP) $(SWIFT) test --skip-build \
	        --scratch-path $$scratch --sanitize=$$sanitizer --disable-xctest \
	        --filter "$(UNIT_TESTS)" --skip "$(SANITIZE_SERIAL_TESTS)" || exit 1; \
	    CRESCENT_SANITIZER=$$sanitizer $(SANITIZER_OPTIONS) $(REAP) $(SWIFT) test --skip-build \
	        --scratch-path $$scratch --sanitize=$$sanitizer --disable-xctest \
	        --no-parallel --filter "$(SANITIZE_SERIAL_TESTS)" || exit 1; \
	done

# Coverage-guided fuzzing (libFuzzer through -sanitize=fuzzer) of every parser of outside input
# and of Lua<->model value conversion: each target runs FUZZ_SECONDS from its seed corpus in
# Fuzz/corpus/TARGET (make test runs them for FUZZ_TEST_SECONDS). Only our own modules are
# instrumented (Package.swift), so the fuzz build shares the debug build's dependencies and
# recompiles just ours, instrumented; the next plain build recompiles them again (a few minutes),
# which is why make test fuzzes last.
FUZZ_SECONDS ?= 60
FUZZ_TEST_SECONDS ?= 4
FUZZ_TARGETS = nmea gpx gpsd feed json config url lua-value
fuzz: setup
	CRESCENT_FUZZ=1 $(SWIFT) build --product crescent-fuzz
	@tools/fuzz.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# make install puts a statically linked crescent in PREFIX/bin, without its debug information (a
# third of the file; the symbols stay, so backtraces still name functions), and the geocoder's data in
# PREFIX/share/crescent, where the binary looks for it, so it runs from any folder and
# `#!/usr/bin/env crescent` scripts run with PREFIX/bin on the PATH. INSTALL_CONFIG=debug installs
# the debug build instead, linked as statically: make test's test-install uses it, so that a clean
# clone is not compiled a third time (debug, fuzz, release) just to check the install.
INSTALL_CONFIG ?= release
# The debug build's objects autolink Foundation's shared libraries; linking them statically needs
# the static Swift runtime plus Foundation's own static parts, grouped because they refer to each other.
# The plain build comes first so that the static one only links: SwiftPM does not recompile when
# --static-swift-stdlib changes, so objects it compiled would keep autolinking the static libraries.
STATIC_FOUNDATION = Foundation CoreFoundation FoundationEssentials FoundationInternationalization \
	_FoundationICU _FoundationCollections _FoundationCShims stdc++
STATIC_DEBUG_FLAGS = --static-swift-stdlib --disable-local-rpath -Xlinker --start-group \
	$(foreach lib,$(STATIC_FOUNDATION),-Xlinker -l$(lib)) -Xlinker --end-group
install: setup
ifeq ($(INSTALL_CONFIG),debug)
	$(SWIFT) build --product crescent
	$(SWIFT) build $(STATIC_DEBUG_FLAGS) --product crescent
else
	$(SWIFT) build $(RELEASE_FLAGS) --product crescent
endif
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(PREFIX)/share/crescent"
	install -m 0755 .build/$(INSTALL_CONFIG)/crescent "$(DESTDIR)$(PREFIX)/bin/crescent"
	strip --strip-debug "$(DESTDIR)$(PREFIX)/bin/crescent"
	install -m 0644 Sources/Services/Geocoder/Resources/places.cgeo "$(DESTDIR)$(PREFIX)/share/crescent/places.cgeo"
ifeq ($(INSTALL_CONFIG),debug)
	@# When the static link had to compile the crescent module (it was out of date), its objects
	@# autolink the static Foundation libraries, and SwiftPM keeps them for the next plain build,
	@# whose link then fails (cannot find -lCoreFoundation): they go, so that build compiles it again.
	rm -f .build/debug/crescent.build/*.o
endif

uninstall:
	rm -f "$(DESTDIR)$(PREFIX)/bin/crescent" "$(DESTDIR)$(PREFIX)/share/crescent/places.cgeo"
	-rmdir "$(DESTDIR)$(PREFIX)/share/crescent" 2>/dev/null

# Installs into a temporary prefix and runs a shebang script from another folder with only that
# prefix's bin on a minimal PATH (the geocoder's data included), then uninstalls. It installs the
# debug build (see install); TEST_INSTALL_CONFIG=release checks the release one.
TEST_INSTALL_CONFIG ?= debug
test-install:
	@INSTALL_CONFIG=$(TEST_INSTALL_CONFIG) tools/test-install.sh

# The geocoder rows compare against PyPI's reverse_geocoder 1.5.1 (with numpy and scipy), installed
# for python3 here when missing; nothing else needs it.
# One set of flags for both products, so nothing is compiled twice.
bench: setup
	@python3 -c 'import reverse_geocoder' 2>/dev/null || python3 -m pip install --quiet reverse_geocoder==1.5.1
	$(SWIFT) build $(RELEASE_FLAGS) --product crescent
	$(SWIFT) build $(RELEASE_FLAGS) --product crescent-bench
	.build/release/crescent-bench $(BENCH_ARGS)

clean:
	rm -rf .build
