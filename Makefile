# Makefile - drives CMake. `make demo` and `make check` do all the set-up.
BUILD   ?= build
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
PREFIX  ?= /usr/local
CHECK   := $(BUILD)/check
RELEASE := $(BUILD)/release

.PHONY: all deps release check rig demo bench install clean

all: release

deps:
	@sh scripts/install-deps.sh

$(RELEASE)/CMakeCache.txt:
	cmake -S . -B $(RELEASE) -DCMAKE_BUILD_TYPE=Release -DBB_WERROR=ON \
	    -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null

release: deps $(RELEASE)/CMakeCache.txt
	cmake --build $(RELEASE) -j $(JOBS)

# Every test, under AddressSanitizer and UndefinedBehaviorSanitizer, with -Werror.
check: deps
	cmake -S . -B $(CHECK) -DCMAKE_BUILD_TYPE=Debug -DBB_WERROR=ON \
	    -DBB_SANITIZE='address;undefined' >/dev/null
	cmake --build $(CHECK) -j $(JOBS)
	cd $(CHECK) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    ctest --output-on-failure -j $(JOBS)

# The real multi-tier rig alone (tests/rig/; needs root), verbose.
rig: deps
	cmake -S . -B $(CHECK) -DCMAKE_BUILD_TYPE=Debug -DBB_WERROR=ON \
	    -DBB_SANITIZE='address;undefined' >/dev/null
	cmake --build $(CHECK) -j $(JOBS) --target bbapp bbcap bbnest bbconv
	cd $(CHECK) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    ctest -R '^rig_' -V

demo: release
	@sh scripts/demo.sh $(RELEASE)

bench: release
	@sh tests/bench/run.sh $(RELEASE)

install: release
	cmake --install $(RELEASE)

clean:
	rm -rf $(BUILD)
