# LiveBridge. `make demo` and `make test` do all set-up on a fresh Debian/Ubuntu with a Swift 6 toolchain.
SWIFT ?= swift
PACKAGES := libwebsockets-dev libcurl4-openssl-dev libyaml-dev pkg-config
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEMO_PORT ?= 8099

.PHONY: install all deps build release static-c++ hot-code dist images test resilience sanitize fuzz e2e demo bench bench-self bench-rules screenshots clean

all: build

## deps: install the C libraries' -dev packages when missing
deps:
	@missing=""; for p in $(PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build

## release: the deployable binary, Swift's runtime and Foundation linked in, linked by the toolchain's lld:
## - packed relative relocations (DT_RELR, glibc ≥ 2.36): 1.7 MiB of relocation records the loader reads at every start
##   shrink to 30 KiB;
## - one section per function, and the functions a running daemon executes (bench/livebridge.order, from
##   `make hot-code`) placed first, together: the kernel maps 64 KiB around each page fault, so hot code spread over
##   10 MiB of text costs resident memory far beyond its size;
## - segments aligned to 64 KiB, that window, so where code falls in the windows is the same at every start whatever
##   address ASLR picks;
## - a run path of $ORIGIN/lib (DT_RPATH: it also serves the libraries' own dependencies), where `make dist` bundles
##   the C libraries, so the tarball runs on any glibc Linux; with no lib folder beside it the system's are used;
## - the C++ runtime Swift's runtime needs linked in too, when libstdc++.a is installed (libstdc++-dev, which Swift's
##   toolchain requires): loaded as libstdc++.so it resolves thousands of its own symbols at every start, 1 MiB
##   resident, for the few functions the runtime calls. A folder holding only the archive, searched first, makes the
##   toolchain's -lstdc++ pick it.
STATIC_CXX := $(shell clang -print-file-name=libstdc++.a 2>/dev/null)
STATIC_CXX_DIR := $(CURDIR)/.build/static-c++
RELEASE_WITHOUT_ORDER := -c release --static-swift-stdlib -Xswiftc -enforce-exclusivity=unchecked -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs \
	-Xlinker --disable-new-dtags -Xlinker -rpath -Xlinker '$$ORIGIN/lib' \
	-Xlinker -z -Xlinker max-page-size=65536 \
	-Xswiftc -Xfrontend -Xswiftc -function-sections $(if $(filter /%,$(STATIC_CXX)),-Xswiftc -L$(STATIC_CXX_DIR))
RELEASE := $(RELEASE_WITHOUT_ORDER) -Xlinker --symbol-ordering-file=$(CURDIR)/bench/livebridge.order -Xlinker --no-warn-symbol-ordering
export RELEASE_WITHOUT_ORDER
# SwiftPM does not see the order file: relink when it is newer than the binary.
RELINK_IF_REORDERED = @for binary in .build/release/livebridge .build/release/LiveBridgeBenchmark; do \
	[ ! -e $$binary ] || [ $$binary -nt bench/livebridge.order ] || rm -f $$binary; done
static-c++:
	@[ -z "$(filter /%,$(STATIC_CXX))" ] || { mkdir -p $(STATIC_CXX_DIR) && ln -sf $(STATIC_CXX) $(STATIC_CXX_DIR)/libstdc++.a; }

release: deps static-c++
	$(RELINK_IF_REORDERED)
	$(SWIFT) build $(RELEASE) --product livebridge

## dist: the release tarball, .build/dist/livebridge-VERSION-linux-ARCH.tar.gz (the binary, the C libraries it needs in
## lib/, the systemd unit, the example rules, secrets and states, the README's install sections), then installed as the
## README says in clean Debian bookworm, trixie and testing roots with nothing else (debootstrap, cached in
## ~/.cache/livebridge-roots; chroot: --version, check, render, run against the simulator to the fake). Needs root.
## install: the release binary to $(PREFIX)/bin/livebridge (PREFIX=/usr/local; PREFIX=~/.local needs no root)
PREFIX ?= /usr/local
install: release
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 .build/release/livebridge $(DESTDIR)$(PREFIX)/bin/livebridge
	@echo "installed $(DESTDIR)$(PREFIX)/bin/livebridge"

dist: release
	@version=$$(.build/release/livebridge --version | cut -d' ' -f2) && name=livebridge-$$version-linux-$$(uname -m) \
	&& rm -rf .build/dist/$$name && mkdir -p .build/dist/$$name \
	&& install -m 755 .build/release/livebridge .build/dist/$$name/ \
	&& Tests/packaging/bundle-libraries.sh .build/dist/$$name \
	&& install -m 644 config/livebridge.service config/livebridge.example.yaml config/secrets.example.yaml \
		config/states.example.json .build/dist/$$name/ \
	&& { printf '# LiveBridge %s\n\nHome Assistant entities to iOS Live Activities. From the README:\n\n' $$version; \
		awk '/^## Where to go next/ { exit } /^## Before you start/ { on = 1 } on' README.md; \
		awk '/^## Creating the access token/ { on = 1; print "#" $$0; next } on && /^#/ { exit } on' docs/running.md; \
		} > .build/dist/$$name/README.md \
	&& tar -C .build/dist --owner=0 --group=0 -czf .build/dist/$$name.tar.gz $$name \
	&& Tests/packaging/clean-root-check.sh .build/dist/$$name.tar.gz

## images: the add-on's and the container's images built on a debootstrapped Debian base (no registry here) with the
## release binary, then run against the simulator and a fake Aivi (ContainerImageTests). Needs root and docker.io.
images: release
	Tests/packaging/images.sh

## test: every unit and loopback test. Each suite run here has a time bound (Tests/harness/bounded-tests.sh): a hang
## prints its threads' stacks and the tests still running, and fails the run, instead of holding it forever.
BOUNDED = Tests/harness/bounded-tests.sh
TESTS = debug/LiveBridgePackageTests.xctest --testing-library swift-testing
test: deps
	$(SWIFT) build --build-tests
	$(BOUNDED) 600 .build/test.log .build/$(TESTS) --skip ResilienceTests

## resilience: faults it must survive: the daemon under restarts, silence, a 2-minute backend outage, kill -9, a read-only disk (DaemonResilienceTests); mutated rules files and responses, malformed and oversized frames, a full disk (ResilienceTests). make test skips both.
resilience: deps
	$(SWIFT) build --build-tests
	$(BOUNDED) 900 .build/resilience.log .build/$(TESTS) --filter ResilienceTests

## sanitize: make test's suites under ThreadSanitizer, then AddressSanitizer; the first report fails the run.
## Locks are pthread mutexes in the TSan build (-D LIVEBRIDGE_PTHREAD_LOCK): TSan does not see Swift's Mutex on Linux
## and would report every value behind one. The CLI tests run the sanitized livebridge binary too. Leak checking is
## off: the Swift runtime's metadata caches live until exit by design.
## Under TSan the tests run one at a time (--no-parallel): in parallel, long tests (the template corpus waiting on its
## subprocess, the limit walks, a 20 MiB snapshot; 10-27 s each under TSan) held both of a 2-core machine's pool threads, and tests
## awaiting sockets or timers ran out of their minute (CI on a slow day: 12 failed; alone each passes). A test's own
## threads stay concurrent, which is what TSan checks.
sanitize: deps
	$(SWIFT) build --build-tests --sanitize=thread -Xswiftc -DLIVEBRIDGE_PTHREAD_LOCK --scratch-path .build-tsan
	TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" $(BOUNDED) 1800 .build-tsan/tests.log .build-tsan/$(TESTS) --skip ResilienceTests --no-parallel
	$(SWIFT) build --build-tests --sanitize=address --scratch-path .build-asan
	ASAN_OPTIONS="halt_on_error=1 detect_leaks=0 exitcode=67" $(BOUNDED) 900 .build-asan/tests.log .build-asan/$(TESTS) --skip ResilienceTests

## fuzz: libFuzzer (-sanitize=fuzzer,address) on the rules loader, the JSON reader, Home Assistant's frames, templates
## over hostile states, state.json, blueprint events and a WebSocket server's bytes, FUZZ_SECONDS each (default 60). Seeds: Tests/Fuzz/corpus/TARGET; what it learns stays in
## .build-fuzz/corpus (FUZZ_KEEP=1 merges it, minimised, into Tests/). A crash, a leak-free hang over 10 s or 2 GiB is a
## finding, written to Tests/Fuzz/findings/TARGET/: make it a unit test, fix it, commit the file (make test replays it).
## Leak detection is off: Swift's lazily made globals look like leaks to LeakSanitizer.
FUZZ_TARGETS := rules json messages templates entityStates formatSpec suggest stateFile events webSocket
FUZZ_SECONDS ?= 60
fuzz: deps
	$(SWIFT) build -c release --product LiveBridgeFuzz --scratch-path .build-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -DLIVEBRIDGE_FUZZING
	@for target in $(FUZZ_TARGETS); do \
		mkdir -p .build-fuzz/corpus/$$target Tests/Fuzz/findings/$$target; \
		echo "fuzz $$target: $(FUZZ_SECONDS) s"; \
		ASAN_OPTIONS=detect_leaks=0 LIVEBRIDGE_FUZZ_TARGET=$$target .build-fuzz/release/LiveBridgeFuzz -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
			-rss_limit_mb=2048 -detect_leaks=0 -print_final_stats=1 -artifact_prefix=Tests/Fuzz/findings/$$target/ \
			.build-fuzz/corpus/$$target Tests/Fuzz/corpus/$$target 2>.build-fuzz/$$target.log \
			|| { tail -n 60 .build-fuzz/$$target.log; echo "fuzz $$target: finding in Tests/Fuzz/findings/$$target/"; exit 1; }; \
		grep -E "stat::number_of_executed_units|stat::peak_rss_mb" .build-fuzz/$$target.log; \
		if [ "$(FUZZ_KEEP)" = 1 ]; then LIVEBRIDGE_FUZZ_TARGET=$$target .build-fuzz/release/LiveBridgeFuzz -merge=1 -detect_leaks=0 \
			Tests/Fuzz/corpus/$$target .build-fuzz/corpus/$$target 2>/dev/null; fi; \
		rmdir Tests/Fuzz/findings/$$target 2>/dev/null || true; \
	done

## e2e: against a real Home Assistant (venv cached in ~/.cache/livebridge-e2e)
e2e: build
	Tests/e2e/run.sh

## demo: a simulated household, LiveBridge running the demo rules, and the live preview page at http://127.0.0.1:8099
demo: deps
	$(SWIFT) build --product livebridge
	.build/debug/livebridge demo --port $(DEMO_PORT)

## screenshots: every example drawn, opened in headless Chromium, checked; config examples saved to docs/screens/
screenshots: build
	@command -v chromium >/dev/null 2>&1 || ($(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium)
	python3 Tests/screenshots/check.py

## bench: side by side in one run (bench/peer): LiveBridge (release, as deployed), a Python asyncio bridge and a C floor
## against the same Home Assistant-like server and pushes — start-up with 5,000 entities (idle) and the paced flood
## (25,000 changes/s, min_interval 1 s) one message a frame, then in Home Assistant's coalesce_messages framing. Prints
## ranges and the ratios per repetition (about 8 minutes with BENCH_REPS=3). Tables in .build/bench/*/table.txt.
BENCH_REPS ?= 3
bench: release
	WORK=$(CURDIR)/.build/bench LIVEBRIDGE=$(CURDIR)/.build/release/livebridge REPS=$(BENCH_REPS) EACH=0 SCENARIOS="idle paced1s" \
		OUT=$(CURDIR)/.build/bench/one-message-a-frame bench/peer/compare.sh
	WORK=$(CURDIR)/.build/bench LIVEBRIDGE=$(CURDIR)/.build/release/livebridge REPS=$(BENCH_REPS) EACH=0 SCENARIOS="paced1s" COALESCE=1 \
		OUT=$(CURDIR)/.build/bench/coalesce-messages bench/peer/compare.sh

## bench-self: LiveBridge alone under the simulator's load (LiveBridgeBenchmark), for profiling and the hot-code order
bench-self: deps static-c++
	$(RELINK_IF_REORDERED)
	$(SWIFT) build $(RELEASE) --product livebridge
	$(SWIFT) build $(RELEASE) --product LiveBridgeBenchmark
	.build/release/LiveBridgeBenchmark .build/release/livebridge 100000 bench/results.json

## hot-code: regenerate bench/livebridge.order from callgrind profiles of the daemon under the benchmark (needs valgrind)
hot-code: deps static-c++
	bench/profile-hot-code

## bench-rules: 1,000 activities against 100,000 state changes (release build)
bench-rules: deps
	$(SWIFT) run -c release RulesBenchmark

clean:
	rm -rf .build
