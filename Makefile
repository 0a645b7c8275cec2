# Mist: a thin wrapper over CMake.  `make run` and `make test` work from a
# fresh clone on Debian 12: each installs the missing Debian packages,
# configures, builds, then runs the tour or the test suite.

SHELL := /bin/bash
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD_TYPE ?= RelWithDebInfo
FUZZ_SECONDS ?= 300

# Packages the build and the tests need (python3: benchmark baseline, and
# the check that checkpoints read back with Python's standard library;
# python3-numpy: tests that compare Mist's output with NumPy's, and the
# baseline of the tensor update benchmark; libjansson-dev: safetensors
# headers; librsvg2-bin: rsvg-convert renders plot's SVG in a test;
# dataset-fashion-mnist: the flagship's data; llvm-19-dev: graph mode's
# code generator, jit/llvm/, LLVM's C API).
DEPS := build-essential cmake pkg-config libgc-dev check libreadline-dev \
        zlib1g-dev libffi-dev clang tmux python3 python3-numpy libopenblas-dev \
        libjansson-dev librsvg2-bin dataset-fashion-mnist llvm-19-dev libsleef-dev
FUZZ_DEPS := clang libclang-rt-14-dev

.PHONY: all build run test test-asan bench bench-update bench-grad bench-jit bench-fashion-mnist fuzz fuzz-readers fuzz-elf deps fuzz-deps clean

all: build

# Install each package that dpkg does not report as installed (a removed
# package whose config files remain counts as missing); apt-get update
# runs once, and only when something is missing.  sudo only when not root.
define install_missing
	@missing=""; \
	for p in $(1); do \
	  dpkg -s "$$p" 2>/dev/null | grep -q '^Status: install ok installed' \
	    || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing; \
	fi
endef

deps:
	$(call install_missing,$(DEPS))

fuzz-deps:
	$(call install_missing,$(FUZZ_DEPS))

build:
	cmake -S . -B build -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)
	cmake --build build -j$(JOBS)

# The flagship: the MLP on Fashion-MNIST, 10 epochs (well under a minute
# on 2 cores); `make run RUN_ARGS="--model cnn"` trains the CNN.
RUN_ARGS ?=
run: deps
	$(MAKE) --no-print-directory build
	./build/mist examples/tour.ms
	./build/mist examples/fashion_mnist.ms $(RUN_ARGS)

test: deps
	$(MAKE) --no-print-directory build
	ctest --test-dir build --output-on-failure -j$(JOBS)

# Sanitizer settings for a program whose heap belongs to Boehm GC: no leak
# checking (the GC frees lazily, so LeakSanitizer would report every live
# object), no fake stacks (the GC must see every pointer on the real stack),
# and the GC may install its own signal handlers.
SAN_ENV := ASAN_OPTIONS=detect_leaks=0:detect_stack_use_after_return=0:allow_user_segv_handler=1 \
           UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# AddressSanitizer + UBSan build of everything, then every test.
test-asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DMIST_ASAN=ON
	cmake --build build-asan -j$(JOBS)
	$(SAN_ENV) ctest --test-dir build-asan --output-on-failure -j$(JOBS)

bench: build
	bash bench/run.sh; s=$$?; bash bench/update_run.sh || s=1; bash bench/grad_run.sh || s=1; bash bench/literal_run.sh || s=1; bash bench/jit_run.sh || s=1; exit $$s

# Graph mode's compiled code against C (gcc -O2), and start-up (bench/).
bench-jit: build
	bash bench/jit_run.sh
	bash bench/jit_tensor_run.sh
	bash bench/jit_reduce_run.sh
	bash bench/jit_mlp_run.sh
	bash bench/jit_cache_run.sh
	bash bench/startup_run.sh

# Updates of lists, dicts and tensors against CPython and NumPy (bench/update/).
bench-update: build
	bash bench/update_run.sh

# The cost of a gradient relative to its function (bench/grad/), beside
# PyTorch's when python3-torch is installed (optional, not in DEPS).
bench-grad: build
	bash bench/grad_run.sh

# Seconds per Fashion-MNIST epoch, Mist against PyTorch (python3-torch,
# optional), for the flagship's MLP and CNN.
bench-fashion-mnist: build
	bash bench/fashion_mnist_run.sh

# libFuzzer over the parser and the interpreter, seeded from tests/fuzz/corpus.
# New inputs found go to build-fuzz/corpus, so the committed seeds stay small.
fuzz: deps fuzz-deps
	CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMIST_FUZZ=ON
	cmake --build build-fuzz -j$(JOBS) --target fuzz_mist
	mkdir -p build-fuzz/corpus build-fuzz/artifacts
	$(SAN_ENV) ./build-fuzz/tests/fuzz/fuzz_mist -max_total_time=$(FUZZ_SECONDS) \
	  -timeout=25 -rss_limit_mb=2048 -max_len=4096 \
	  -dict=tests/fuzz/mist.dict \
	  -artifact_prefix=build-fuzz/artifacts/ \
	  build-fuzz/corpus tests/fuzz/corpus

# libFuzzer over the file readers (IDX, NPY, CSV, safetensors; gzip'd or
# not: fuzz-readers) and over the loader of compiled objects (jit/elf.c,
# which reads the compile cache: fuzz-elf), each seeded from
# tests/fuzz/NAME_corpus.
fuzz-readers fuzz-elf: fuzz-%: deps fuzz-deps
	CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMIST_FUZZ=ON
	cmake --build build-fuzz -j$(JOBS) --target fuzz_$*
	mkdir -p build-fuzz/$*_corpus build-fuzz/artifacts
	$(SAN_ENV) ./build-fuzz/tests/fuzz/fuzz_$* -max_total_time=$(FUZZ_SECONDS) \
	  -timeout=25 -rss_limit_mb=2048 -max_len=65536 \
	  -artifact_prefix=build-fuzz/artifacts/ \
	  build-fuzz/$*_corpus tests/fuzz/$*_corpus

clean:
	rm -rf build build-asan build-fuzz bench/.bin
