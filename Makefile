# kvplan - plain GNU make.  A single Makefile keeps the build legible and
# needs nothing beyond build-essential and pkg-config; see README.md.
#
#   make            library (static + shared) and the kvplan tool, in build/
#   make test       unit tests, data-driven CLI cases (tests/run.sh), the browser
#                   build's (web/web.mk: web-check, web-test) and the llama.cpp
#                   oracle (tests/oracle/run.sh: the real llama.cpp)
#   make check      unit tests, cases, the vLLM logs and the docs examples
#   make check SAN=1  those under AddressSanitizer + UBSan (build-san/)
#   make demo       the catalog table
#   make install PREFIX=/usr/local   (the tool, the libraries, the header, kvplan.pc, man kvplan)
#   make docs       the docs' Usage blocks from the binary's --help, then docs/kvplan.1

PREFIX  ?= /usr/local
CC      ?= cc
SAN     ?=
B       ?= $(if $(SAN),build-san,build)

JANSSON_CFLAGS := $(shell pkg-config --cflags jansson 2>/dev/null)
JANSSON_LIBS   := $(shell pkg-config --libs jansson 2>/dev/null || echo -ljansson) -lm
CURL_CFLAGS    := $(shell pkg-config --cflags libcurl 2>/dev/null)
CURL_LIBS      := $(shell pkg-config --libs libcurl 2>/dev/null || echo -lcurl)

CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -D_DEFAULT_SOURCE \
           -Iinclude $(JANSSON_CFLAGS) $(CURL_CFLAGS)
ifneq ($(SAN),)
CFLAGS  += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
endif

LIB_SRC := $(wildcard lib/*.c lib/*/*.c)
LIB_OBJ := $(LIB_SRC:lib/%.c=$(B)/lib/%.o) $(B)/lib/catalog_data.o
LIB_HDR := $(wildcard lib/*.h lib/*/*.h) include/kvplan.h
CLI_SRC := $(wildcard src/*.c)
CLI_OBJ := $(CLI_SRC:src/%.c=$(B)/src/%.o)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
MODELS  := $(wildcard data/models/*.json) data/models/catalog.list

.PHONY: all test check install-check oracle demo install clean
all: $(B)/kvplan $(B)/libkvplan.so

$(B)/lib $(B)/src $(B)/tests $(B)/tools:
	@mkdir -p $@

$(B)/lib/%.o: lib/%.c $(LIB_HDR) | $(B)/lib
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -c $< -o $@

$(B)/tools/embed: tools/embed.c | $(B)/tools
	$(CC) $(CFLAGS) $< -o $@ $(LDFLAGS)

$(B)/lib/catalog_data.c: $(B)/tools/embed $(MODELS) | $(B)/lib
	$(B)/tools/embed data/models/catalog.list $@

$(B)/lib/catalog_data.o: $(B)/lib/catalog_data.c
	$(CC) $(CFLAGS) -fPIC -c $< -o $@

$(B)/libkvplan.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(B)/libkvplan.so: $(LIB_OBJ) lib/kvplan.map
	$(CC) -shared -Wl,--version-script=lib/kvplan.map -o $@ $(LIB_OBJ) $(LDFLAGS) $(JANSSON_LIBS) $(CURL_LIBS)

$(B)/src/%.o: src/%.c src/*.h include/kvplan.h | $(B)/src
	$(CC) $(CFLAGS) -c $< -o $@

$(B)/kvplan: $(CLI_OBJ) $(B)/libkvplan.a
	$(CC) -o $@ $^ $(LDFLAGS) $(JANSSON_LIBS) $(CURL_LIBS)

$(B)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(B)/libkvplan.a | $(B)/tests
	$(CC) $(CFLAGS) -Ilib $< -o $@ $(B)/libkvplan.a $(LDFLAGS) $(JANSSON_LIBS) $(CURL_LIBS)

# the build on every core first, then the runners (which share out the cores
# themselves) one after the other
NPROC := $(shell nproc 2>/dev/null || echo 1)
.PHONY: build-tests
build-tests: $(B)/kvplan $(B)/libkvplan.a $(B)/libkvplan.so $(UNIT_BIN)

check:
	@case '$(MAKEFLAGS)' in *jobserver*) j= ;; *) j=-j$(NPROC) ;; esac; \
	$(MAKE) --no-print-directory $$j build-tests
	@KVPLAN=$(CURDIR)/$(B)/kvplan UNIT_DIR=$(CURDIR)/$(B)/tests bash tests/run.sh
	@$(MAKE) --no-print-directory vllm-logs
	@$(MAKE) --no-print-directory docs-check
	@$(MAKE) --no-print-directory docs-examples

# the docs agree with the binary: each command page's Usage block is its
# --help, docs/kvplan.1 is what tools/docs-man.py makes (tests/docs/help-sync.sh)
.PHONY: docs docs-check
docs-check: $(B)/kvplan
	@KVPLAN=$(CURDIR)/$(B)/kvplan bash tests/docs/help-sync.sh

# regenerate the Usage blocks from the binary, then the man page from the docs
docs: $(B)/kvplan
	bash tools/docs-help.sh $(B)/kvplan
	python3 tools/docs-man.py > docs/kvplan.1

# every ```console example in README.md and docs/ run and its output compared
# (tests/docs/examples.sh), after the runner's own self-test
.PHONY: docs-examples
docs-examples: $(B)/kvplan
	@KVPLAN=$(CURDIR)/$(B)/kvplan bash tests/docs/examples.sh --self-test
	@KVPLAN=$(CURDIR)/$(B)/kvplan bash tests/docs/examples.sh

# vLLM's memory estimate against the public startup logs (tests/vllm-logs)
.PHONY: vllm-logs
vllm-logs: $(B)/kvplan
	@KVPLAN=$(CURDIR)/$(B)/kvplan bash tests/vllm-logs/run.sh

test:
	@$(MAKE) --no-print-directory check
	@$(MAKE) --no-print-directory -j1 install-check
	@case '$(MAKEFLAGS)' in *jobserver*) j= ;; *) j=-j$(NPROC) ;; esac; \
	$(MAKE) --no-print-directory $$j web
	@$(MAKE) --no-print-directory -j1 web-check
	@$(MAKE) --no-print-directory -j1 web-test
	@$(MAKE) --no-print-directory -j1 oracle

# make install into a scratch prefix; the README's library example against it,
# and the man page installed and rendered without warnings
install-check: $(B)/kvplan $(B)/libkvplan.a $(B)/libkvplan.so
	@B=$(B) bash tests/install-check.sh

DEMO_MODELS := qwen3-8b mistral-7b-v0.3 gemma-3-4b-it gpt-oss-20b deepseek-v2-lite qwen3.5-9b

# The seeds' table (DESIGN 7.1): theory, llama.cpp as llama-server runs with
# -fa on --parallel 1, and what one vLLM request reserves (LLM class on an
# A100), plus the q8_0 / fp8 and --swa-full rows.
demo: $(B)/kvplan
	@$(B)/kvplan models
	@echo
	@$(B)/kvplan compare $(DEMO_MODELS) -c 4k,32k,128k -np 1 -fa on --variants f16,q8_0,swa-full

install: $(B)/kvplan $(B)/libkvplan.a $(B)/libkvplan.so
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include \
	           $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(B)/kvplan $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(B)/libkvplan.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(B)/libkvplan.so $(DESTDIR)$(PREFIX)/lib/
	install -m 644 include/kvplan.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 docs/kvplan.1 $(DESTDIR)$(PREFIX)/share/man/man1/kvplan.1
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|0.1.0|' kvplan.pc.in \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/kvplan.pc

clean:
	rm -rf build build-san

# libFuzzer targets under ASan/UBSan (clang): make fuzz FUZZ_SECONDS=60
.PHONY: fuzz
fuzz:
	FUZZ_SECONDS=$(or $(FUZZ_SECONDS),60) bash fuzz/run.sh

# Benchmarks, each printing its ratio against a reference measured in the same
# run (bench/run.sh; fetches node-llama-cpp into bench/node_modules once).
.PHONY: bench
$(B)/bench:
	@mkdir -p $@

$(B)/bench/bench_gguf: bench/bench_gguf.c lib/gguf.h $(B)/libkvplan.a | $(B)/bench
	$(CC) $(CFLAGS) -Ilib $< -o $@ $(B)/libkvplan.a $(LDFLAGS) $(JANSSON_LIBS) $(CURL_LIBS) -ldl

bench: $(B)/bench/bench_gguf $(B)/kvplan
	@BENCH_GGUF=$(CURDIR)/$(B)/bench/bench_gguf bash bench/run.sh
	@echo
	@KVPLAN=$(CURDIR)/$(B)/kvplan BENCH_GGUF=$(CURDIR)/$(B)/bench/bench_gguf bash bench/bench_remote.sh

oracle: $(B)/kvplan
	@KVPLAN=$(CURDIR)/$(B)/kvplan bash tests/oracle/run.sh --source both

# The prefix-cache simulator's bench: block operations per second against a
# linear-scan replay of the same workload, in the same run.
.PHONY: bench-sim
$(B)/bench/bench_sim: bench/bench_sim.c $(B)/libkvplan.a | $(B)/bench
	$(CC) $(CFLAGS) $< -o $@ $(B)/libkvplan.a $(LDFLAGS) $(JANSSON_LIBS) $(CURL_LIBS)

bench-sim: $(B)/bench/bench_sim
	@$(B)/bench/bench_sim

# The serving simulator's bench: scheduler steps per second replaying the
# Mooncake conversation trace concurrently (vLLM and radix, untimed and timed,
# trace and burst arrivals), each against the sequential replay of the same
# run.  TRACE=FILE (else $$BENCH_SERVE_TRACE, else ../shared/traces/...).
.PHONY: bench-serve
$(B)/bench/bench_serve: bench/bench_serve.c $(B)/libkvplan.a | $(B)/bench
	$(CC) $(CFLAGS) $< -o $@ $(B)/libkvplan.a $(LDFLAGS) $(JANSSON_LIBS) $(CURL_LIBS)

bench-serve: $(B)/bench/bench_serve
	@$(B)/bench/bench_serve $(TRACE)

# The step-time model against the published points of serving-sim-rules.md 5:
# model vs published per point, the relative errors and their median / worst.
.PHONY: bench-steptime
$(B)/bench/steptime_points: bench/steptime_points.c lib/serve/steptime.h $(B)/libkvplan.a | $(B)/bench
	$(CC) $(CFLAGS) -Ilib $< -o $@ $(B)/libkvplan.a $(LDFLAGS) $(JANSSON_LIBS) $(CURL_LIBS)

bench-steptime: $(B)/bench/steptime_points
	@$(B)/bench/steptime_points
include web/web.mk
