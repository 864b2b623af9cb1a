# The verbs people type. `make install` then the README's quickstart; `make test` runs unit,
# integration and end-to-end tests (the real daemon and a real Loki) and the arm64 bundle's; CI
# (.ci/run) runs it after check-format, thread-safety, asan, fuzz and tsan.
SHELL := /bin/bash
BUILD ?= build
PLUGIN ?= skald
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo
# The architecture built for: the host's, or ARCH=arm64 (cross-compiled with
# .ci/toolchain-arm64.cmake; its programs run here under qemu-aarch64-static). A foreign
# architecture's build directories and pushed tags carry ARCH_SUFFIX (-arm64).
HOST_ARCH := $(shell dpkg --print-architecture 2>/dev/null || echo amd64)
# Every build directory compiles through ccache when it is installed.
CCACHE_CMAKE := $(if $(shell command -v ccache),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
ARM64_CMAKE := -DCMAKE_TOOLCHAIN_FILE=$(CURDIR)/.ci/toolchain-arm64.cmake $(CCACHE_CMAKE)
ARCH ?= $(HOST_ARCH)
ifeq ($(ARCH),$(HOST_ARCH))
ARCH_SUFFIX :=
ARCH_CMAKE :=
ARCH_TOOL_PREFIX :=
ARCH_RUN :=
ARCH_LIST_LIBS := ldd
else ifeq ($(ARCH),arm64)
ARCH_SUFFIX := -arm64
ARCH_CMAKE := $(ARM64_CMAKE)
ARCH_TOOL_PREFIX := aarch64-linux-gnu-
ARCH_RUN := qemu-aarch64-static
# ldd runs the host's loader: ask the arm64 one (from libc6:arm64) to list what it loads.
ARCH_LIST_LIBS := qemu-aarch64-static /lib/ld-linux-aarch64.so.1 --list
else
$(error ARCH=$(ARCH): only the host's architecture ($(HOST_ARCH)) and arm64 are supported)
endif
# The plugin bundle: a Release build of the plugin alone (no tests), stripped; its debug info
# is kept beside it as $(RELEASE_BUILD)/skald.debug.
RELEASE_BUILD ?= build-release$(ARCH_SUFFIX)
# The build directory whose plugin/skald the bundle is made of (`make bundle`).
BUNDLE_BUILD ?= $(RELEASE_BUILD)
BUNDLE ?= $(BUNDLE_BUILD)/plugin-bundle
VERSION := $(shell awk '/^project.skald VERSION/ {print $$3}' CMakeLists.txt)
COMMIT := $(shell git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
# make push REGISTRY=host:port[/path] TAG=x
REGISTRY ?=
TAG ?= $(VERSION)

DEB_PACKAGES := build-essential cmake ninja-build pkg-config clang-format \
  libcpp-httplib-dev libprotobuf-dev protobuf-compiler nlohmann-json3-dev libre2-dev \
  libspdlog-dev libgtest-dev libgmock-dev libsnappy-dev libyaml-cpp-dev libssl-dev \
  libbenchmark-dev libsimdjson-dev libabsl-dev ca-certificates tzdata \
  busybox-static docker-compose curl valgrind docker-registry openssl nginx-light \
  libmaxminddb-dev
# make asan / tsan / fuzz / thread-safety: clang with its sanitizer and libFuzzer runtimes;
# ccache (.ci/run keeps its cache with the Loki build's).
DEB_PACKAGES += clang libclang-rt-14-dev llvm ccache

.PHONY: all deps build test unit integration e2e e2e-of-build e2e-cluster unit-arm64 e2e-arm64 plugin bundle \
  install uninstall \
  push bench profile format check-format check-layers clean thread-safety asan tsan fuzz

all: build

deps:
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null \
	  | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else echo "deps: all present"; fi
	@.ci/deps-arm64.sh
	@tests/e2e/ensure-dockerd.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) $(CCACHE_CMAKE)

build: $(BUILD)/build.ninja
	ninja -C $(BUILD) -j$(JOBS)

unit: build
	cd $(BUILD) && ctest -L unit --no-tests=error --output-on-failure -j$(JOBS)

integration: build
	cd $(BUILD) && ctest -L integration --no-tests=error --output-on-failure

# The managed-plugin bundle: config.json (its description naming the version and commit) and a
# rootfs with the stripped binary, exactly the shared libraries it needs, CA certificates,
# nsswitch.conf and zoneinfo. Prints the rootfs size and the binary's idle peak RSS.
plugin:
	cmake -S . -B $(RELEASE_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DSKALD_BUILD_TESTS=OFF \
	  -DSKALD_BUILD_BENCH=OFF -DSKALD_COMMIT=$(COMMIT) $(CCACHE_CMAKE) $(ARCH_CMAKE) >/dev/null
	ninja -C $(RELEASE_BUILD) -j$(JOBS) skald
	@$(MAKE) --no-print-directory bundle BUNDLE_BUILD=$(RELEASE_BUILD)

# The bundle of $(BUNDLE_BUILD)/plugin/skald as it is (no build).
bundle:
	rm -rf $(BUNDLE) && mkdir -p $(BUNDLE)
	sed 's|"description": "skald: |"description": "skald $(VERSION) ($(COMMIT)): |' config.json \
	  >$(BUNDLE)/config.json
	cp -a rootfs $(BUNDLE)/rootfs
	$(ARCH_TOOL_PREFIX)objcopy --only-keep-debug $(BUNDLE_BUILD)/plugin/skald $(BUNDLE_BUILD)/skald.debug
	install -D -m 0755 $(BUNDLE_BUILD)/plugin/skald $(BUNDLE)/rootfs/usr/bin/skald
	$(ARCH_TOOL_PREFIX)strip --strip-unneeded $(BUNDLE)/rootfs/usr/bin/skald
	$(ARCH_TOOL_PREFIX)objcopy --add-gnu-debuglink=$(BUNDLE_BUILD)/skald.debug $(BUNDLE)/rootfs/usr/bin/skald
	for lib in $$($(ARCH_LIST_LIBS) $(BUNDLE)/rootfs/usr/bin/skald | grep -o '/[^ ]*'); do \
	  install -D -m 0755 "$$(readlink -f $$lib)" "$(BUNDLE)/rootfs$$lib"; done
	install -D -m 0644 /etc/ssl/certs/ca-certificates.crt \
	  $(BUNDLE)/rootfs/etc/ssl/certs/ca-certificates.crt
	@# OpenSSL looks for the system trust store at its OPENSSLDIR (/usr/lib/ssl on Debian):
	@# without these, https:// with no loki-tls-ca-file verified against nothing.
	mkdir -p $(BUNDLE)/rootfs/usr/lib/ssl
	ln -sfn /etc/ssl/certs/ca-certificates.crt $(BUNDLE)/rootfs/usr/lib/ssl/cert.pem
	ln -sfn /etc/ssl/certs $(BUNDLE)/rootfs/usr/lib/ssl/certs
	mkdir -p $(BUNDLE)/rootfs/usr/share && cp -a /usr/share/zoneinfo $(BUNDLE)/rootfs/usr/share/
	@$(ARCH_RUN) $(BUNDLE)/rootfs/usr/bin/skald --version
	@du -sh $(BUNDLE)/rootfs | sed 's/^/plugin rootfs$(ARCH_SUFFIX): /'
	@# Under emulation the peak RSS would be qemu's: measured for the host's architecture only.
	@[ -z "$(ARCH_RUN)" ] || echo "plugin idle VmHWM: not measured for $(ARCH) (emulated)"
	@[ -n "$(ARCH_RUN)" ] || { tmp=$$(mktemp -d); \
	  SKALD_SOCKET=$$tmp/s.sock STATE_DIR=$$tmp/state METRICS_ADDR= $(BUNDLE)/rootfs/usr/bin/skald >/dev/null 2>&1 & pid=$$!; sleep 2; \
	  grep VmHWM /proc/$$pid/status | sed 's/^VmHWM:[ \t]*/plugin idle VmHWM: /'; \
	  kill $$pid; wait $$pid 2>/dev/null; rm -rf $$tmp; }

# Builds only the plugin (Release), then creates and enables it as $(PLUGIN).
install: deps plugin
	-docker plugin disable -f $(PLUGIN) >/dev/null 2>&1
	-docker plugin rm -f $(PLUGIN) >/dev/null 2>&1
	docker plugin create $(PLUGIN) $(BUNDLE)
	docker plugin enable --timeout 0 $(PLUGIN)
	@docker plugin ls --filter enabled=true | grep -q '$(PLUGIN)' && echo "installed: $(PLUGIN)"

uninstall:
	-docker plugin disable -f $(PLUGIN)
	-docker plugin rm -f $(PLUGIN)

# Creates the plugin as $(REGISTRY)/skald:$(TAG)$(ARCH_SUFFIX) and pushes it (the registry must be
# trusted by the daemon: plugins are pushed over TLS only). ARCH=arm64 pushes the arm64 bundle
# as TAG-arm64: a managed plugin has no multi-architecture manifest, so each architecture has
# a tag of its own.
PUSH_REF = $(REGISTRY)/skald:$(TAG)$(ARCH_SUFFIX)
push: plugin
	@[ -n "$(REGISTRY)" ] || { echo "usage: make push REGISTRY=host:port[/path] TAG=x [ARCH=arm64]"; \
	  exit 2; }
	-docker plugin rm -f $(PUSH_REF) >/dev/null 2>&1
	docker plugin create $(PUSH_REF) $(BUNDLE)
	docker plugin push $(PUSH_REF)
	docker plugin rm $(PUSH_REF)

# End-to-end: the suites run against a copy of the plugin of their own (skald-e2e, its own
# state directory and metrics port), removed afterwards with what the tests made; an installed
# `skald` is left as it is. E2E_ARGS go to ctest: make e2e E2E_ARGS="-R 'e2e\.Pipeline$$'".
E2E_ARGS ?=
e2e: plugin build
	tests/e2e/run-e2e.sh $(BUNDLE) $(BUILD) $(E2E_ARGS)

# make test's end-to-end run: the bundle is made of $(BUILD)'s binary (RelWithDebInfo: the same
# -O2 -DNDEBUG code as the Release build, stripped the same way) instead of compiling the
# plugin a second time, which keeps CI's cold run within its time.
e2e-of-build: build
	@$(MAKE) --no-print-directory bundle BUNDLE_BUILD=$(BUILD)
	tests/e2e/run-e2e.sh $(BUILD)/plugin-bundle $(BUILD) $(E2E_ARGS)

# A replicated Loki cluster (three nodes, replication factor 3, an nginx gateway) with write
# nodes killed and rolled and the gateway restarted under load (tests/e2e/cluster_test.cc), on
# the same copy of the plugin as e2e-of-build. Not part of `make test`; .ci/run calls it.
e2e-cluster: build
	@$(MAKE) --no-print-directory bundle BUNDLE_BUILD=$(BUILD)
	SKALD_E2E_LABELS='^e2e-cluster$$' tests/e2e/run-e2e.sh $(BUILD)/plugin-bundle $(BUILD) $(E2E_ARGS)

# arm64 under emulation. unit-arm64: the unit tests cross-built (Release, like the bundle, in the
# same build directory: the libraries are compiled once for both) and run by ctest under
# qemu-aarch64-static. e2e-arm64: the arm64 bundle as the plugin copy skald-arm64-e2e on this
# host's dockerd (tests/e2e/run-e2e-arm64.sh: binfmt_misc set up and put back as found), the
# test programs from $(BUILD). E2E_ARM64_ARGS go to ctest (default: its suites).
ARM64_BUILD = build-release-arm64
ARM64_UNIT_TESTS = pipeline_stages_tests plugin_unit_tests fake_loki_tests
# tests/tools/test_slowdown.h: qemu-user runs the regex-heavy workloads some 20-40x slower.
ARM64_TEST_SLOWDOWN ?= 20
E2E_ARM64_ARGS ?=
unit-arm64:
	cmake -S . -B $(ARM64_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DSKALD_BUILD_TESTS=ON \
	  -DSKALD_BUILD_BENCH=OFF -DSKALD_COMMIT=$(COMMIT) $(ARM64_CMAKE) >/dev/null
	ninja -C $(ARM64_BUILD) -j$(JOBS) $(ARM64_UNIT_TESTS)
	rm -rf $(ARM64_BUILD)/unit-results
	cd $(ARM64_BUILD) && SKALD_TEST_SLOWDOWN=$(ARM64_TEST_SLOWDOWN) \
	  ctest -L unit --no-tests=error --output-on-failure -j$(JOBS)
	@for f in $(ARM64_BUILD)/unit-results/*.json; do \
	  awk -v name=$$(basename $$f .json) '/"tests":/ && !t {t = $$2 + 0} \
	    /"failures":/ && !seen {f = $$2 + 0; seen = 1} /"result": "SKIPPED"/ {s++} \
	    END {printf "arm64 (qemu) %s: %d tests, %d failed, %d skipped\n", name, t, f, s}' $$f; \
	done

e2e-arm64: build
	$(MAKE) plugin ARCH=arm64
	tests/e2e/run-e2e-arm64.sh $(ARM64_BUILD)/plugin-bundle $(BUILD) $(E2E_ARM64_ARGS)

test: unit integration e2e-of-build unit-arm64 e2e-arm64

# Benchmarks (tests/bench/run-bench.sh): micro, the plugin alone, real Docker side by side with
# Grafana's Go driver. Own build dir; prints markdown tables, writes $(BENCH_OUT)/results.json.
BENCH_BUILD ?= build-bench
BENCH_OUT ?= build/bench
bench:
	BENCH_BUILD=$(BENCH_BUILD) BENCH_OUT=$(BENCH_OUT) BENCH_JOBS=$(JOBS) tests/bench/run-bench.sh

# Where the plugin spends its CPU under load: threads, top functions, syscalls per 10k lines
# (perf over plugin_load_bench; tests/bench/profile-load.sh, PROFILE_* variables).
profile: build
	PROFILE_BUILD=$(BUILD) tests/bench/profile-load.sh

# The clang builds (README: Fuzzing and sanitizers). One build directory, CLANG_BUILD, holds
# the product built once by clang with ASan + UBSan, libFuzzer's coverage instrumentation and
# -Wthread-safety -Werror (tests/sanitize/configure.sh); three targets use it:
#   thread-safety  the plugin built there (every ABSL_GUARDED_BY and ABSL_EXCLUSIVE_LOCKS_REQUIRED
#                  checked), then the check that the analysis is live (tests/thread_safety)
#   asan           the unit and integration tests under ASan + UBSan (and LeakSanitizer)
#   fuzz           every tests/fuzz target for FUZZ_SECONDS on a scratch copy of its seed corpus
# `make tsan`: the concurrent parts' unit tests under ThreadSanitizer, in TSAN_BUILD
# (tests/sanitize/run-sanitizer.sh). CI runs all four.
CLANG_BUILD ?= build-clang
TSAN_BUILD ?= build-tsan
FUZZ_SECONDS ?= 60
FUZZ_SEED ?=
thread-safety:
	tests/sanitize/configure.sh $(CLANG_BUILD) clang
	ninja -C $(CLANG_BUILD) -j$(JOBS) skald
	tests/thread_safety/must-not-compile.sh clang++ .

asan:
	SAN_BUILD=$(CLANG_BUILD) SAN_JOBS=$(JOBS) tests/sanitize/run-sanitizer.sh asan

tsan:
	SAN_BUILD=$(TSAN_BUILD) SAN_JOBS=$(JOBS) tests/sanitize/run-sanitizer.sh tsan

fuzz:
	FUZZ_BUILD=$(CLANG_BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_SEED=$(FUZZ_SEED) FUZZ_JOBS=$(JOBS) tests/fuzz/run-fuzz.sh

FORMAT_FILES = $(shell git ls-files '*.cc' '*.h')
format:
	clang-format -i $(FORMAT_FILES)

check-format:
	clang-format --dry-run -Werror $(FORMAT_FILES)

# The wings' layering (plugin/CMakeLists.txt): every include runs down the declared edges.
check-layers:
	tests/layering/check-wings.py
	tests/layering/check-wings.py --self-test

clean:
	rm -rf $(BUILD) $(CLANG_BUILD) $(TSAN_BUILD)
