# nytp — one build for the library, the command, the tests and the docs.
#
#   make              build everything into build/ (the command: build/nytp)
#   make test         install missing packages, build, run every test
#   make run          install missing packages, build, show the demo profile
#   make deps         install the Debian packages for build, tests, benchmarks
#   make install      PREFIX=/usr/local DESTDIR=
#   make bench        benchmarks against Devel::NYTProf (not part of test)
#   make fuzz-smoke   run the libFuzzer target for $(FUZZ_SECONDS) seconds

PREFIX ?= /usr/local
DESTDIR ?=
BUILD := build
FUZZ_SECONDS ?= 60

CC ?= cc
CLANG ?= clang
CFLAGS ?= -O2 -g
WARN := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CPPFLAGS += -D_GNU_SOURCE -Ilibformat/include
LIBS := -lz -lm -pthread
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

LIB_SRC := $(wildcard libformat/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
LIB_HDR := $(wildcard libformat/include/nytp/*.h) $(wildcard libformat/*.h)
CMD_SRC := $(wildcard cmd/*.c)
CMD_OBJ := $(CMD_SRC:%.c=$(BUILD)/obj/%.o)
CMD_HDR := $(wildcard cmd/*.h)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/unit/%)
ASAN_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/asan/%)
TSAN_BIN := $(BUILD)/tsan/test_reader $(BUILD)/tsan/test_io
UNIT_HELPER := tests/unit/helpers.c

# Debian packages: build, tests, benchmarks.  libclang-rt-dev holds the
# libFuzzer runtime, which clang only recommends (and deps skips recommends).
DEB_PACKAGES := build-essential pkg-config libperl-dev zlib1g-dev libbsd-dev valgrind chromium \
	libcmocka-dev clang libclang-rt-dev libdevel-nytprof-perl libdevel-dprof-perl perltidy \
	libjson-pp-perl man-db time

.PHONY: all test unit unit-asan unit-tsan integration run deps deps-check install bench \
	fuzz fuzz-smoke clean

all: $(BUILD)/nytp $(BUILD)/libnytpformat.a

$(BUILD)/obj/%.o: %.c $(LIB_HDR) $(CMD_HDR) $(BUILD)/gen/perl_config.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -I$(BUILD)/gen $(WARN) $(CFLAGS) -fPIC -c $< -o $@

# The @INC and version of the system perl, so that 'nytp dump --data' shows
# file names as Devel::NYTProf on this machine does (override: --inc).
$(BUILD)/gen/perl_config.h: cmd/perl_config.pl
	@mkdir -p $(dir $@)
	@perl cmd/perl_config.pl > $@.tmp 2>/dev/null \
	|| printf '#define NYTP_PERL_INC ""\n#define NYTP_PERL_VERSION ""\n' > $@.tmp
	@mv $@.tmp $@

$(BUILD)/libnytpformat.a: $(LIB_OBJ)
	@mkdir -p $(BUILD)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/nytp: $(CMD_OBJ) $(BUILD)/libnytpformat.a
	$(CC) $(CFLAGS) -o $@ $(CMD_OBJ) $(BUILD)/libnytpformat.a $(LIBS)

# ---- unit tests (cmocka), plain and under ASan+UBSan --------------------

$(BUILD)/unit/%: tests/unit/%.c $(UNIT_HELPER) tests/unit/helpers.h $(BUILD)/libnytpformat.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/unit $(WARN) $(CFLAGS) -o $@ $< $(UNIT_HELPER) \
		$(BUILD)/libnytpformat.a -lcmocka $(LIBS)

$(BUILD)/asan/%: tests/unit/%.c $(UNIT_HELPER) tests/unit/helpers.h $(LIB_SRC) $(LIB_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/unit $(WARN) -O1 -g $(SAN) -o $@ $< $(UNIT_HELPER) \
		$(LIB_SRC) -lcmocka $(LIBS)

$(BUILD)/tsan/%: tests/unit/%.c $(UNIT_HELPER) tests/unit/helpers.h $(LIB_SRC) $(LIB_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/unit $(WARN) -O1 -g -fsanitize=thread -o $@ $< $(UNIT_HELPER) \
		$(LIB_SRC) -lcmocka $(LIBS)

# Plain unit tests run with the inflate thread off (NYTP_THREADS=0), the
# sanitizer builds with it on, so both ways of inflating are tested.
unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t (one thread)"; \
		NYTP_THREADS=0 NYTP_TESTDATA=testdata $$t; done

unit-tsan: $(TSAN_BIN)
	@set -e; for t in $(TSAN_BIN); do echo "== $$t (ThreadSanitizer)"; \
		TSAN_OPTIONS=halt_on_error=1 NYTP_TESTDATA=testdata $$t; done

unit-asan: $(ASAN_BIN)
	@set -e; for t in $(ASAN_BIN); do echo "== $$t (ASan+UBSan)"; \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		NYTP_TESTDATA=testdata $$t; done

integration: all
	prove -v tests/

test: deps-check all unit unit-asan unit-tsan integration fuzz-smoke

# ---- fuzzing (libFuzzer, clang) ------------------------------------------

FUZZ_BIN := $(BUILD)/fuzz/fuzz_reader
FUZZ_CMD_SRC := cmd/dump.c cmd/dump_data.c cmd/cli.c cmd/fmt.c cmd/calls.c cmd/flame_svg.c \
	cmd/html.c cmd/html_pages.c cmd/html_assets.c
$(FUZZ_BIN): tests/fuzz/fuzz_reader.c $(LIB_SRC) $(LIB_HDR) $(FUZZ_CMD_SRC) $(CMD_HDR) \
		$(BUILD)/gen/perl_config.h
	@mkdir -p $(dir $@)
	$(CLANG) $(CPPFLAGS) -Icmd -I$(BUILD)/gen $(WARN) -O1 -g -fsanitize=fuzzer,address,undefined \
		-o $@ tests/fuzz/fuzz_reader.c $(LIB_SRC) $(FUZZ_CMD_SRC) $(LIBS)

fuzz: $(FUZZ_BIN)

# One thread per input keeps runs fast and repeatable; the threaded
# inflater is covered by the ASan and TSan unit runs.
fuzz-smoke: $(FUZZ_BIN)
	@rm -rf $(BUILD)/fuzz/corpus && mkdir -p $(BUILD)/fuzz/corpus $(BUILD)/fuzz/crashes
	@find testdata -type f \( -name '*.out' -o -name '*.nytprof' \) -size -256k \
		-exec cp {} $(BUILD)/fuzz/corpus/ \;
	@cp tests/fuzz/corpus/* $(BUILD)/fuzz/corpus/ 2>/dev/null || true
	NYTP_THREADS=0 $(FUZZ_BIN) -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 \
		-artifact_prefix=$(BUILD)/fuzz/crashes/ -print_final_stats=1 \
		$(BUILD)/fuzz/corpus 2>&1 | tail -n 25
	@if ls $(BUILD)/fuzz/crashes/* >/dev/null 2>&1; then \
		echo "fuzz-smoke: crashes saved in $(BUILD)/fuzz/crashes"; exit 1; fi
	@echo "fuzz-smoke: no crash in $(FUZZ_SECONDS) seconds"

# ---- set-up ---------------------------------------------------------------

# Install missing Debian packages (as root, or through sudo).
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' \
			|| missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then echo "deps: all packages present"; exit 0; fi; \
	echo "deps: installing$$missing"; \
	SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	export DEBIAN_FRONTEND=noninteractive; \
	$$SUDO apt-get update -qq </dev/null && \
	$$SUDO apt-get install -y -qq --no-install-recommends $$missing </dev/null

deps-check:
	@$(MAKE) --no-print-directory deps

# ---- the demo ---------------------------------------------------------------

run: deps-check all
	@echo "== nytp dump testdata/demo.out (first 25 of $$($(BUILD)/nytp dump testdata/demo.out | wc -l) chunks)"
	@$(BUILD)/nytp dump testdata/demo.out > $(BUILD)/demo.dump
	@head -n 25 $(BUILD)/demo.dump
	@echo "== the whole dump is in $(BUILD)/demo.dump"
	@$(BUILD)/nytp html -o $(BUILD)/demo-report testdata/demo.out
	@echo "== its HTML report: $(BUILD)/demo-report/index.html"

# Screenshots of the demo's HTML report, for a person to look at.
SHOT_CHROMIUM := chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--user-data-dir=$(BUILD)/screenshots/.chromium --window-size=1280,1000
.PHONY: report-screenshots
report-screenshots: all
	@rm -rf $(BUILD)/screenshots && mkdir -p $(BUILD)/screenshots
	$(BUILD)/nytp html -o $(BUILD)/screenshots/report testdata/demo.out
	@set -e; cd $(BUILD)/screenshots; for page in index subs $$(cd report && ls f1-*.html | sed 's/\.html$$//'); do \
		$(SHOT_CHROMIUM) --screenshot=$$PWD/$$page.png file://$$PWD/report/$$page.html 2>/dev/null; done
	@rm -rf $(BUILD)/screenshots/.chromium
	@ls $(BUILD)/screenshots/*.png

# ---- benchmarks ---------------------------------------------------------------

bench: deps-check all
	bench/run

# ---- install ------------------------------------------------------------------

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man5 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions \
		$(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/nytp
	install -m 755 $(BUILD)/nytp $(DESTDIR)$(PREFIX)/bin/nytp
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 man/*.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	install -m 644 completion/nytp.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/nytp
	install -m 644 completion/_nytp $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_nytp
	install -m 644 $(BUILD)/libnytpformat.a $(DESTDIR)$(PREFIX)/lib/
	install -m 644 libformat/include/nytp/*.h $(DESTDIR)$(PREFIX)/include/nytp/

clean:
	rm -rf $(BUILD)
