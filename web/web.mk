# web/web.mk - the browser build (issue 12), included by the Makefile.
#
#   make web        build/web/: index.html + kvplan.js + kvplan.wasm (the page),
#                   kvplan-single.html (one file, works opened from disk), and
#                   kvplan-node.js with a `kvplan` wrapper (the same C under node)
#   make web-check  every case of tests/run.sh against the node build
#
# The library and the CLI compile with Debian's emscripten as they are, less
# the libcurl transport (web/net_web.c stands in: no network) and with the
# GGUF reader reading headers instead of mapping files (KVP_NO_MMAP).
# jansson comes from Debian's own source package, fetched by
# `tools/install-deps --web` into build-deps/ (nothing vendored).

# Debian's emscripten finds its acorn and python this way
EMCC        ?= env NODE_PATH=/usr/share/nodejs EMSDK_PYTHON=/usr/bin/python3 emcc
WEB         := build/web
WEB_DEPS    ?= build-deps
JANSSON_DIR ?= $(WEB_DEPS)/jansson
WEB_CFLAGS  := -O2 -std=c11 -D_DEFAULT_SOURCE -DKVP_NO_MMAP -Wall -Wextra \
               -Iinclude -Ilib -I$(WEB)/jansson
WEB_LIB_SRC := $(filter-out lib/net/http.c,$(LIB_SRC)) web/net_web.c web/hub_web.c
WEB_OBJ     := $(WEB_LIB_SRC:%.c=$(WEB)/obj/%.o) $(CLI_SRC:%.c=$(WEB)/obj/%.o) \
               $(WEB)/obj/catalog_data.o
JANSSON_C   := dump.c error.c hashtable.c hashtable_seed.c load.c memory.c pack_unpack.c \
               strbuffer.c strconv.c utf.c value.c version.c
JANSSON_OBJ := $(JANSSON_C:%.c=$(WEB)/jansson/%.o)
WEB_LDFLAGS := -O2 -sALLOW_MEMORY_GROWTH=1

.PHONY: web web-check
web: $(WEB)/kvplan $(WEB)/kvplan.js $(WEB)/index.html $(WEB)/kvplan-single.html

$(JANSSON_DIR)/src/jansson.h:
	@echo "make web: no jansson source in $(JANSSON_DIR); run tools/install-deps --web" >&2
	@exit 1

# configure's answers for wasm32: inline, long long, localeconv, atomics
$(WEB)/jansson/jansson_config.h: $(JANSSON_DIR)/src/jansson.h
	@mkdir -p $(dir $@)
	sed -e 's/@json_inline@/inline/' -e 's/@json_have_long_long@/1/' \
	    -e 's/@json_have_localeconv@/1/' -e 's/@json_have_atomic_builtins@/1/' \
	    -e 's/@json_have_sync_builtins@/1/' $(JANSSON_DIR)/src/jansson_config.h.in > $@
	cp $(JANSSON_DIR)/src/jansson.h $(WEB)/jansson/
	printf '#define %s 1\n' HAVE_STDINT_H HAVE_UNISTD_H HAVE_FCNTL_H HAVE_SYS_TYPES_H \
	    HAVE_SYS_STAT_H HAVE_SYS_TIME_H HAVE_GETPID HAVE_GETTIMEOFDAY HAVE_OPEN HAVE_READ \
	    HAVE_CLOSE HAVE_LOCALECONV HAVE_ATOMIC_BUILTINS HAVE_SYNC_BUILTINS USE_URANDOM \
	    > $(WEB)/jansson/jansson_private_config.h

$(WEB)/jansson/%.o: $(JANSSON_DIR)/src/%.c $(WEB)/jansson/jansson_config.h
	$(EMCC) -O2 -DHAVE_CONFIG_H -I$(WEB)/jansson -c $< -o $@

$(WEB)/obj/%.o: %.c $(LIB_HDR) src/cli.h $(WEB)/jansson/jansson_config.h
	@mkdir -p $(dir $@)
	$(EMCC) $(WEB_CFLAGS) -c $< -o $@

$(WEB)/obj/catalog_data.o: $(B)/lib/catalog_data.c
	@mkdir -p $(dir $@)
	$(EMCC) $(WEB_CFLAGS) -c $< -o $@

$(WEB)/libkvplan-web.a: $(WEB_OBJ) $(JANSSON_OBJ)
	rm -f $@
	@emar rcs $@ $^

# under node, on the real file system, exiting with main's status
$(WEB)/kvplan-node.js: $(WEB)/libkvplan-web.a web/node_env.js
	$(EMCC) $(WEB_LDFLAGS) -sNODERAWFS=1 -sEXIT_RUNTIME=1 -sENVIRONMENT=node \
	    --pre-js web/node_env.js -o $@ $(WEB)/libkvplan-web.a

$(WEB)/kvplan: $(WEB)/kvplan-node.js
	printf '#!/bin/sh\nexec node "$$(dirname "$$0")/kvplan-node.js" "$$@"\n' > $@
	chmod +x $@

# what web/kvplan_api.js calls besides main: memory, the environment, the
# GGUF header's length, and web/hub.js's Hub answers (web/net_web.c,
# web/hub_web.c, the header cache)
WEB_EXPORTS := _main,_fflush,_malloc,_free,_setenv,_unsetenv,_kvp_gguf_header_need
WEB_EXPORTS := $(WEB_EXPORTS),_kvp_web_net_put,_kvp_web_hub_pick,_hdrcache_put

# the page's module: main called once per run(), the runtime kept alive, the
# C stdout and stderr caught byte by byte (web/kvplan_api.js)
WEB_PAGE_FLAGS := -sMODULARIZE=1 -sEXPORT_NAME=createKvplan -sINVOKE_RUN=0 -sEXIT_RUNTIME=0 \
                  -sFORCE_FILESYSTEM=1 -sENVIRONMENT=web,worker,node \
                  -sEXPORTED_FUNCTIONS=$(WEB_EXPORTS) \
                  -sEXPORTED_RUNTIME_METHODS=callMain,FS,UTF8ToString,stringToUTF8,lengthBytesUTF8

$(WEB)/kvplan.js: $(WEB)/libkvplan-web.a
	$(EMCC) $(WEB_LDFLAGS) $(WEB_PAGE_FLAGS) -o $@ $(WEB)/libkvplan-web.a

$(WEB)/kvplan-inline.js: $(WEB)/libkvplan-web.a
	$(EMCC) $(WEB_LDFLAGS) $(WEB_PAGE_FLAGS) -sSINGLE_FILE=1 -o $@ $(WEB)/libkvplan-web.a

WEB_PAGE := web/index.html web/style.css web/kvplan_api.js web/hub.js web/app.js web/sw.js

$(WEB)/index.html: $(WEB_PAGE) $(WEB)/kvplan.js
	cp web/style.css web/kvplan_api.js web/hub.js web/app.js web/sw.js $(WEB)/
	cp web/index.html $@

# one file that works opened from disk: the module (wasm inlined as base64),
# the API, the page's script and style, all inside the HTML
$(WEB)/kvplan-single.html: $(WEB_PAGE) $(WEB)/kvplan-inline.js web/inline.js
	node web/inline.js web/index.html $(WEB)/kvplan-inline.js > $@

web-check: $(WEB)/kvplan
	@KVPLAN=$(CURDIR)/$(WEB)/kvplan UNIT_DIR= NO_NETWORK=1 bash tests/run.sh

# the page in Debian's chromium (playwright-core from npm), against build/kvplan
.PHONY: web-test
web-test: web $(B)/kvplan
	@node tests/web/run.mjs

# page ready time and one query's time in the browser, beside the native CLI
.PHONY: bench-web
bench-web: web $(B)/kvplan
	@node bench/bench_web.mjs
