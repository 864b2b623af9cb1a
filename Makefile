# The verbs people type. `make install` then the README's quickstart; `make test` runs
# everything CI runs (unit, integration, end-to-end against the real daemon and a real Loki).
SHELL := /bin/bash
BUILD ?= build
# Host directory of the plugin's `state` mount (config.json), where journals live.
STATE_SOURCE ?= /var/lib/skald
BUNDLE ?= $(BUILD)/plugin-bundle
PLUGIN ?= skald
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo

DEB_PACKAGES := build-essential cmake ninja-build pkg-config clang-format \
  libcpp-httplib-dev libprotobuf-dev protobuf-compiler nlohmann-json3-dev libre2-dev \
  libspdlog-dev libgtest-dev libgmock-dev libsnappy-dev libyaml-cpp-dev libssl-dev \
  libbenchmark-dev libsimdjson-dev libabsl-dev ca-certificates tzdata \
  busybox-static docker-compose curl valgrind

.PHONY: all deps build test unit integration e2e plugin install uninstall bench format \
  check-format clean

all: build

deps:
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null \
	  | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else echo "deps: all present"; fi
	@tests/e2e/ensure-dockerd.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: $(BUILD)/build.ninja
	ninja -C $(BUILD) -j$(JOBS)

unit: build
	cd $(BUILD) && ctest -L unit --output-on-failure -j$(JOBS)

integration: build
	cd $(BUILD) && ctest -L integration --output-on-failure

# The managed-plugin bundle: config.json + rootfs with the binary, exactly the shared libraries
# it needs, CA certificates, nsswitch.conf and zoneinfo.
plugin: build
	rm -rf $(BUNDLE) && mkdir -p $(BUNDLE)
	cp config.json $(BUNDLE)/config.json
	cp -a rootfs $(BUNDLE)/rootfs
	install -D -m 0755 $(BUILD)/plugin/skald $(BUNDLE)/rootfs/usr/bin/skald
	for lib in $$(ldd $(BUILD)/plugin/skald | grep -o '/[^ ]*'); do \
	  install -D -m 0755 "$$(readlink -f $$lib)" "$(BUNDLE)/rootfs$$lib"; done
	install -D -m 0644 /etc/ssl/certs/ca-certificates.crt \
	  $(BUNDLE)/rootfs/etc/ssl/certs/ca-certificates.crt
	mkdir -p $(BUNDLE)/rootfs/usr/share && cp -a /usr/share/zoneinfo $(BUNDLE)/rootfs/usr/share/
	@du -sh $(BUNDLE)/rootfs | sed 's/^/plugin rootfs: /'

install: deps build plugin
	-docker plugin disable -f $(PLUGIN) >/dev/null 2>&1
	-docker plugin rm -f $(PLUGIN) >/dev/null 2>&1
	docker plugin create $(PLUGIN) $(BUNDLE)
	@# The daemon does not create a missing bind-mount source: enable would fail with
	@# "stat /var/lib/skald: no such file or directory".
	mkdir -p $(STATE_SOURCE)
	docker plugin enable --timeout 0 $(PLUGIN)
	@docker plugin ls --filter enabled=true | grep -q '$(PLUGIN)' && echo "installed: $(PLUGIN)"

uninstall:
	-docker plugin disable -f $(PLUGIN)
	-docker plugin rm -f $(PLUGIN)

e2e: install
	cd $(BUILD) && ctest -L e2e --output-on-failure

test: unit integration e2e

# Benchmarks (tests/bench/run-bench.sh): micro, the plugin alone, real Docker side by side with
# Grafana's Go driver. Own build dir; prints markdown tables, writes $(BENCH_OUT)/results.json.
BENCH_BUILD ?= build-bench
BENCH_OUT ?= build/bench
bench:
	BENCH_BUILD=$(BENCH_BUILD) BENCH_OUT=$(BENCH_OUT) BENCH_JOBS=$(JOBS) tests/bench/run-bench.sh

FORMAT_FILES = $(shell git ls-files '*.cc' '*.h')
format:
	clang-format -i $(FORMAT_FILES)

check-format:
	clang-format --dry-run -Werror $(FORMAT_FILES)

clean:
	rm -rf $(BUILD)
