# nytp — one build for the library, the command, the tests and the docs.
#
#   make              build everything into build/ (the command: build/nytp)
#   make test         install missing packages, build, run every test
#   make run          install missing packages, build, profile the demo with nytp run
#   make deps         install the Debian packages for build, tests, benchmarks,
#                     and the npm packages of the tests (tests/node_modules)
#   make install      PREFIX=/usr/local DESTDIR= (Devel::NYTP: into perl's site
#                     arch directory under PREFIX, in @INC for PREFIX=/usr/local)
#   make bench        benchmarks against Devel::NYTProf (not part of test)
#   make fuzz-smoke   run the libFuzzer target for $(FUZZ_SECONDS) seconds
#   make fuzz-dprof   the same for the tmon.out reader and dprof-convert ($(FUZZ_DPROF_SECONDS) s)

PREFIX ?= /usr/local
DESTDIR ?=
BUILD := build
FUZZ_SECONDS ?= 60
FUZZ_DPROF_SECONDS ?= 20
TEST_FUZZ_SECONDS ?= 45

CC ?= cc
CLANG ?= clang
CFLAGS ?= -O2 -g
WARN := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CPPFLAGS += -D_GNU_SOURCE -Ilibformat/include
LIBS := -lz -lm -pthread
# Intel ISA-L inflates 2-3 times as fast as zlib; without it, zlib does.
ISAL ?= $(shell test -f /usr/include/isa-l/igzip_lib.h && echo 1)
ifeq ($(ISAL),1)
CPPFLAGS += -DNYTP_HAVE_ISAL
LIBS += -lisal
endif
# The command's messages escape control bytes with libbsd's strnvisx.
CMD_LIBS := -lbsd
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

LIB_SRC := $(wildcard libformat/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
LIB_HDR := $(wildcard libformat/include/nytp/*.h) $(wildcard libformat/*.h)
# The commands, grouped by role (ARCHITECTURE.md): nytp.c, the dispatcher, at
# the top; the shared layer, the reports, the exports, the comparison of
# profiles and the producers of profiles each in a folder, whose headers
# any command includes by name (-iquote: only "..." includes see them).
CMD_DIRS := cmd cmd/common cmd/report cmd/export cmd/compare cmd/produce
CMD_INC := $(addprefix -iquote ,$(CMD_DIRS))
CMD_SRC := $(wildcard $(CMD_DIRS:%=%/*.c) cmd/report/html/*.c) \
	$(filter-out cmd/produce/attach/gen_layout.c,$(wildcard cmd/produce/attach/*.c))
CMD_OBJ := $(CMD_SRC:%.c=$(BUILD)/obj/%.o)
# the shared layer's cli, in parts (cli.h is their contract)
CLI_SRC := $(wildcard cmd/common/cli_*.c)
CMD_HDR := $(wildcard $(CMD_DIRS:%=%/*.h) cmd/report/html/*.h cmd/produce/attach/*.h)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/unit/%)
ASAN_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/asan/%)
TSAN_BIN := $(BUILD)/tsan/test_reader $(BUILD)/tsan/test_io $(BUILD)/tsan/test_deflater
UNIT_HELPER := tests/unit/helpers.c

# The profiler, Devel::NYTP: an XS module built straight from profiler/ with
# the compiler flags of the perl it runs in, linked with libnytpformat.a.
# build/perl is an @INC directory: perl -Ibuild/perl -d:NYTP x.pl.  It is
# installed into perl's site arch directory under PREFIX (with the default
# PREFIX=/usr/local, a directory in Debian perl's @INC).
PERL ?= perl
PERL_CCOPTS := $(shell $(PERL) -MExtUtils::Embed -e ccopts 2>/dev/null)
PERL_LDDL := $(shell $(PERL) -MConfig -e 'print $$Config{lddlflags}' 2>/dev/null)
PERL_SITEARCH := $(shell $(PERL) -MConfig -e '($$_ = $$Config{installsitearch}) =~ s{^\Q$$Config{siteprefix}\E/?}{}; print' 2>/dev/null)
PROFILER_SO := $(BUILD)/perl/auto/Devel/NYTP/NYTP.so
PROFILER_PM := $(BUILD)/perl/Devel/NYTP.pm
# Plack::Middleware::NYTP, shipped with the profiler (pure perl).
MIDDLEWARE_PM := $(BUILD)/perl/Plack/Middleware/NYTP.pm
PROFILER := $(PROFILER_SO) $(PROFILER_PM) $(MIDDLEWARE_PM)

# Debian packages: build, tests, benchmarks.  libclang-rt-dev holds the
# libFuzzer runtime, which clang only recommends (and deps skips recommends).
DEB_PACKAGES := build-essential pkg-config libperl-dev zlib1g-dev libbsd-dev valgrind chromium \
	libcmocka-dev clang libclang-rt-dev libdevel-nytprof-perl libdevel-dprof-perl perltidy \
	libjson-pp-perl man-db time libisal-dev golang-go nodejs graphviz \
	libmoose-perl libdbd-sqlite3-perl starman wrk curl libplack-perl perl-doc libcoro-perl \
	libfuture-asyncawait-perl libsyntax-keyword-try-perl libscope-upper-perl libreturn-multilevel-perl \
	libobject-pad-perl

.PHONY: asan-nytp all test unit unit-asan unit-tsan unit-tsan-cmds integration run deps deps-deb deps-npm deps-check install bench \
	fuzz fuzz-smoke fuzz-dprof clean

all: $(BUILD)/nytp $(BUILD)/libnytpformat.a $(PROFILER) $(BUILD)/man/Devel-NYTP.3pm \
	$(BUILD)/man/Plack-Middleware-NYTP.3pm $(BUILD)/gen-profile

NYTP_VERSION := $(shell sed -n 's/^\#define NYTP_VERSION_STRING "\(.*\)"/\1/p' libformat/include/nytp/nytp.h)

# Devel::NYTP's manual page, from the module's POD (installed as
# Devel::NYTP.3pm; make cannot name a target with colons).
$(BUILD)/man/Devel-NYTP.3pm: profiler/NYTP.pm
	@mkdir -p $(dir $@)
	pod2man --section=3pm --center="nytp manual" --release="nytp $(NYTP_VERSION)" \
		--name=Devel::NYTP profiler/NYTP.pm > $@.tmp && mv $@.tmp $@

$(BUILD)/man/Plack-Middleware-NYTP.3pm: profiler/Plack/Middleware/NYTP.pm
	@mkdir -p $(dir $@)
	pod2man --section=3pm --center="nytp manual" --release="nytp $(NYTP_VERSION)" \
		--name=Plack::Middleware::NYTP profiler/Plack/Middleware/NYTP.pm > $@.tmp && mv $@.tmp $@

# pkg-config file of the library for PREFIX (remade by every install).
.PHONY: $(BUILD)/nytpformat.pc
$(BUILD)/nytpformat.pc: libformat/nytpformat.pc.in
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(NYTP_VERSION)|' -e 's|@LIBS@|$(LIBS)|' \
		libformat/nytpformat.pc.in > $@

$(BUILD)/obj/%.o: %.c $(LIB_HDR) $(CMD_HDR) $(BUILD)/gen/perl_config.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -I$(BUILD)/gen $(WARN) $(CFLAGS) -fPIC -c $< -o $@

# nytp stack and nytp attach read another perl's internals at offsets
# generated here: a program compiled with this perl's own flags and
# headers prints them (offsetof), with the perl's binary-compatibility
# options to check a target against.  If it does not compile (a perl
# without threads, a layout it does not know), the build stops here.
$(BUILD)/gen/perl_layout.h: cmd/produce/attach/gen_layout.c $(BUILD)/gen/nytp_slowops.h
	@mkdir -p $(dir $@)
	$(CC) $(PERL_CCOPTS) -I$(BUILD)/gen -o $(BUILD)/gen/gen_layout cmd/produce/attach/gen_layout.c
	$(BUILD)/gen/gen_layout "$$($(PERL) -e 'print +(Internals::V())[0]')" > $@.tmp
	mv $@.tmp $@
$(filter $(BUILD)/obj/cmd/produce/attach/%,$(CMD_OBJ)): $(BUILD)/gen/perl_layout.h

$(CMD_OBJ): CPPFLAGS += $(CMD_INC)

# 'nytp run' looks for an installed profiler relative to its own binary.
$(BUILD)/obj/cmd/produce/run.o: CPPFLAGS += -DNYTP_SITEARCH='"$(PERL_SITEARCH)"'

# The @INC and version of the system perl, so that 'nytp dump --data' shows
# file names as Devel::NYTProf on this machine does (override: --inc).
$(BUILD)/gen/perl_config.h: cmd/common/perl_config.pl
	@mkdir -p $(dir $@)
	@perl cmd/common/perl_config.pl > $@.tmp 2>/dev/null \
	|| printf '#define NYTP_PERL_INC ""\n#define NYTP_PERL_VERSION ""\n' > $@.tmp
	@mv $@.tmp $@

$(BUILD)/libnytpformat.a: $(LIB_OBJ)
	@mkdir -p $(BUILD)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/gen/nytp_slowops.h: profiler/slowops.pl
	@mkdir -p $(dir $@)
	$(PERL) profiler/slowops.pl > $@.tmp && mv $@.tmp $@

# Perl's headers do not pass -Wshadow/-Wextra cleanly, so the profiler gets
# -Wall -Werror only; -Wmissing-prototypes still guards against stray globals.
# The library's symbols and the profiler's own stay inside NYTP.so
# (--exclude-libs, -fvisibility=hidden; only the boot function is
# exported): no clash with another module's, and with -Bsymbolic the calls
# into the library are direct, not through the PLT (the writer is called
# per statement).
PROFILER_SRC := $(wildcard profiler/*.c)
$(PROFILER_SO): $(PROFILER_SRC) profiler/nytp_prof.h $(BUILD)/gen/nytp_slowops.h $(BUILD)/libnytpformat.a $(LIB_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(PERL_CCOPTS) -Ilibformat/include -I$(BUILD)/gen -DNYTP_XS_VERSION='"$(shell sed -n 's/^our $$VERSION = .\(.*\).;/\1/p' profiler/NYTP.pm)"' \
		-Wall -Wmissing-prototypes -Werror $(CFLAGS) -fPIC -fvisibility=hidden $(PERL_LDDL) -o $@ $(PROFILER_SRC) \
		-Wl,-Bsymbolic -Wl,--exclude-libs,ALL $(BUILD)/libnytpformat.a $(LIBS)

$(PROFILER_PM): profiler/NYTP.pm
	@mkdir -p $(dir $@)
	cp profiler/NYTP.pm $@

$(MIDDLEWARE_PM): profiler/Plack/Middleware/NYTP.pm
	@mkdir -p $(dir $@)
	cp profiler/Plack/Middleware/NYTP.pm $@

$(BUILD)/nytp: $(CMD_OBJ) $(BUILD)/libnytpformat.a
	$(CC) $(CFLAGS) -o $@ $(CMD_OBJ) $(BUILD)/libnytpformat.a $(LIBS) $(CMD_LIBS)

# Hand-made profiles for the integration tests, written by libformat's writer.
$(BUILD)/gen-profile: tests/gen-profile.c $(BUILD)/libnytpformat.a $(LIB_HDR)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -o $@ $< $(BUILD)/libnytpformat.a $(LIBS)

# ---- unit tests (cmocka), plain and under ASan+UBSan --------------------

# the command helpers that unit tests compile in (test_fmt_html, test_term,
# test_cli, test_stats, test_pathmap)
UNIT_CMD := cmd/common/fmt.c cmd/common/fmt.h cmd/common/term.c cmd/common/term.h \
	$(CLI_SRC) cmd/common/cli.h cmd/common/cli_impl.h \
	cmd/compare/stats.c cmd/compare/stats.h cmd/common/strmap.c cmd/common/strmap.h cmd/compare/pathmap.c cmd/compare/pathmap.h

# test_cli and test_pathmap compile in cmd/common/cli_*.c, which needs the commands' libraries
$(BUILD)/unit/test_cli $(BUILD)/asan/test_cli $(BUILD)/tsan/test_cli: LIBS += $(CMD_LIBS)
$(BUILD)/unit/test_pathmap $(BUILD)/asan/test_pathmap: LIBS += $(CMD_LIBS)

$(BUILD)/unit/%: tests/unit/%.c $(UNIT_HELPER) tests/unit/helpers.h $(BUILD)/libnytpformat.a $(UNIT_CMD)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CMD_INC) -Itests/unit $(WARN) $(CFLAGS) -o $@ $< $(UNIT_HELPER) \
		$(BUILD)/libnytpformat.a -lcmocka $(LIBS)

# The library under each sanitizer, compiled once for all the unit tests
# of that build (each test used to compile every source of it again).
ASAN_LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/san-obj/asan/%.o)
TSAN_LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/san-obj/tsan/%.o)

$(BUILD)/san-obj/asan/%.o: %.c $(LIB_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) -O1 -g $(SAN) -c $< -o $@

$(BUILD)/san-obj/tsan/%.o: %.c $(LIB_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) -O1 -g -fsanitize=thread -c $< -o $@

$(BUILD)/asan/%: tests/unit/%.c $(UNIT_HELPER) tests/unit/helpers.h $(ASAN_LIB_OBJ) $(LIB_HDR) $(UNIT_CMD)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CMD_INC) -Itests/unit $(WARN) -O1 -g $(SAN) -o $@ $< $(UNIT_HELPER) \
		$(ASAN_LIB_OBJ) -lcmocka $(LIBS)

$(BUILD)/tsan/%: tests/unit/%.c $(UNIT_HELPER) tests/unit/helpers.h $(TSAN_LIB_OBJ) $(LIB_HDR) $(UNIT_CMD)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CMD_INC) -Itests/unit $(WARN) -O1 -g -fsanitize=thread -o $@ $< $(UNIT_HELPER) \
		$(TSAN_LIB_OBJ) -lcmocka $(LIBS)

# Plain unit tests run with the inflate thread off (NYTP_THREADS=0), the
# sanitizer builds with it on, so both ways of inflating are tested; each
# binary runs once per inflater (NYTP_INFLATE: ISA-L when built in, zlib).
INFLATERS := $(if $(filter 1,$(ISAL)),isal zlib,zlib)

unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do for i in $(INFLATERS); do \
		echo "== $$t (one thread, $$i)"; \
		NYTP_INFLATE=$$i NYTP_THREADS=0 NYTP_TESTDATA=testdata $$t; done; done

unit-tsan: $(TSAN_BIN)
	@set -e; for t in $(TSAN_BIN); do for i in $(INFLATERS); do \
		echo "== $$t (ThreadSanitizer, $$i)"; \
		NYTP_INFLATE=$$i TSAN_OPTIONS=halt_on_error=1 NYTP_TESTDATA=testdata $$t; done; done
	@$(MAKE) --no-print-directory unit-tsan-cmds

# The threads of the commands themselves (the reader's inflate thread,
# merge's deflate writer, html's worker and page writer) under
# ThreadSanitizer: a TSan build of nytp runs merge, html, csv, cachegrind,
# calls and dump on a compressed profile large enough for several blocks
# each way (a recursion 50,000 deep made by gen-profile, merged with itself
# to compress it), and html on a profile of 18 files (its pages are
# written by two threads when there are several).
TSAN_NYTP := $(BUILD)/tsan/nytp
# An ASan+UBSan nytp (with float-cast-overflow, which GCC's UBSan leaves
# out), for checking commands on hostile inputs by hand or in tests that
# use it when it is there (65-bounds.t): make asan-nytp.
ASAN_NYTP := $(BUILD)/asan/nytp
$(ASAN_NYTP): $(CMD_SRC) $(CMD_HDR) $(LIB_SRC) $(LIB_HDR) $(BUILD)/gen/perl_config.h $(BUILD)/gen/perl_layout.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CMD_INC) -I$(BUILD)/gen -DNYTP_SITEARCH='"$(PERL_SITEARCH)"' $(WARN) -O1 -g $(SAN) \
		-fsanitize=float-cast-overflow -o $@ $(CMD_SRC) $(LIB_SRC) $(LIBS) $(CMD_LIBS)
asan-nytp: $(ASAN_NYTP)
$(TSAN_NYTP): $(CMD_SRC) $(CMD_HDR) $(LIB_SRC) $(LIB_HDR) $(BUILD)/gen/perl_config.h $(BUILD)/gen/perl_layout.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CMD_INC) -I$(BUILD)/gen -DNYTP_SITEARCH='"$(PERL_SITEARCH)"' $(WARN) -O1 -g -fsanitize=thread \
		-o $@ $(CMD_SRC) $(LIB_SRC) $(LIBS) $(CMD_LIBS)

unit-tsan-cmds: $(TSAN_NYTP) $(BUILD)/gen-profile
	@set -e; d=$(BUILD)/tsan/cmds; rm -rf $$d; mkdir -p $$d; \
	$(BUILD)/gen-profile recursion 50000 $$d/plain.out; \
	for i in $(INFLATERS); do \
		echo "== $(TSAN_NYTP) merge, html, csv, cachegrind, calls, dump (ThreadSanitizer, $$i)"; \
		export NYTP_INFLATE=$$i TSAN_OPTIONS="halt_on_error=1 exitcode=66"; \
		$(TSAN_NYTP) merge -o $$d/m.out $$d/plain.out $$d/plain.out 2>/dev/null; \
		$(TSAN_NYTP) merge -o $$d/mm.out $$d/m.out $$d/plain.out 2>/dev/null; \
		$(TSAN_NYTP) html -o $$d/html-$$i $$d/mm.out >/dev/null; \
		$(TSAN_NYTP) html -o $$d/html2-$$i testdata/tricky-strings.out >/dev/null; \
		$(TSAN_NYTP) csv -o $$d/csv-$$i $$d/mm.out >/dev/null 2>&1; \
		$(TSAN_NYTP) cachegrind -o $$d/cg-$$i $$d/mm.out; \
		$(TSAN_NYTP) calls $$d/mm.out >/dev/null; \
		$(TSAN_NYTP) dump --data $$d/mm.out >/dev/null; done; \
	rm -rf $$d; echo "unit-tsan-cmds: no data race"

unit-asan: $(ASAN_BIN)
	@set -e; for t in $(ASAN_BIN); do for i in $(INFLATERS); do \
		echo "== $$t (ASan+UBSan, $$i)"; \
		NYTP_INFLATE=$$i ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1 NYTP_TESTDATA=testdata $$t; done; done

# The integration tests that measure time or rely on it (the profiler's
# accuracy, sampling shares, rotation, servers under load, signals and
# children, the attacher, timings compared by diff, growth against input
# size) run one at a time, after the others have run two at a time.
SERIAL_TESTS := $(sort $(wildcard tests/4[1-9]-*.t) tests/50-attach-starman.t tests/66-linear.t \
	tests/75-diff-top.t tests/76-diff-gate.t)
PARALLEL_TESTS := $(filter-out $(SERIAL_TESTS),$(sort $(wildcard tests/*.t)))

integration: all
	NYTP_TEST_ALL=1 prove -j2 $(PARALLEL_TESTS)
	NYTP_TEST_ALL=1 prove -v $(SERIAL_TESTS)

# test, run and bench install packages first, then build in a fresh make,
# so that what the installed packages bring (ISA-L) is seen by the build.
# Everything is built first, two jobs at a time (the machines have two
# cores); then the plain, ASan and ThreadSanitizer unit tests, two at a
# time (each one's output printed whole when it ends); then the
# integration tests alone (some measure time); then the two fuzzers side
# by side (fuzz-smoke for TEST_FUZZ_SECONDS).
test: deps-check
	@$(MAKE) --no-print-directory -j2 all $(UNIT_BIN) $(ASAN_BIN) $(TSAN_BIN) $(TSAN_NYTP) \
		$(FUZZ_BIN) $(FUZZ_DPROF_BIN)
	@$(MAKE) --no-print-directory -j2 --output-sync=target unit unit-asan unit-tsan
	@$(MAKE) --no-print-directory integration
	@$(MAKE) --no-print-directory -j2 --output-sync=target fuzz-smoke fuzz-dprof \
		FUZZ_SECONDS=$(TEST_FUZZ_SECONDS)

# ---- fuzzing (libFuzzer, clang) ------------------------------------------

FUZZ_BIN := $(BUILD)/fuzz/fuzz_reader
FUZZ_CMD_SRC := $(addprefix cmd/common/,strmap.c json.c dump_data.c fmt.c flame_svg.c term.c viewopt.c export.c) $(CLI_SRC) \
	$(addprefix cmd/report/,dump.c calls.c top.c) $(wildcard cmd/report/html/*.c) \
	$(addprefix cmd/compare/,diff.c diff_compare.c diff_text.c diff_json.c flame_diff.c compare.c pathmap.c stats.c) \
	$(addprefix cmd/export/,pprof.c speedscope.c cachegrind.c)
$(FUZZ_BIN): tests/fuzz/fuzz_reader.c $(LIB_SRC) $(LIB_HDR) $(FUZZ_CMD_SRC) $(CMD_HDR) \
		$(BUILD)/gen/perl_config.h
	@mkdir -p $(dir $@)
	$(CLANG) $(CPPFLAGS) $(CMD_INC) -I$(BUILD)/gen $(WARN) -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-o $@ tests/fuzz/fuzz_reader.c $(LIB_SRC) $(FUZZ_CMD_SRC) $(LIBS) $(CMD_LIBS)

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

# The tmon.out reader and dprof-convert (not part of 'test'; run by hand).
FUZZ_DPROF_BIN := $(BUILD)/fuzz/fuzz_dprof
$(FUZZ_DPROF_BIN): tests/fuzz/fuzz_dprof.c $(LIB_SRC) $(LIB_HDR) cmd/produce/dprof.c $(CLI_SRC) cmd/common/strmap.c $(CMD_HDR) \
		$(BUILD)/gen/perl_config.h
	@mkdir -p $(dir $@)
	$(CLANG) $(CPPFLAGS) $(CMD_INC) -I$(BUILD)/gen $(WARN) -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-o $@ tests/fuzz/fuzz_dprof.c $(LIB_SRC) cmd/produce/dprof.c $(CLI_SRC) cmd/common/strmap.c $(LIBS) $(CMD_LIBS)

fuzz-dprof: $(FUZZ_DPROF_BIN)
	@rm -rf $(BUILD)/fuzz/dprof-corpus && mkdir -p $(BUILD)/fuzz/dprof-corpus $(BUILD)/fuzz/crashes
	@find testdata/dprof -type f -name '*.tmon' -size -16k -exec cp {} $(BUILD)/fuzz/dprof-corpus/ \;
	$(FUZZ_DPROF_BIN) -max_total_time=$(FUZZ_DPROF_SECONDS) -max_len=8192 -timeout=10 \
		-artifact_prefix=$(BUILD)/fuzz/crashes/dprof- -print_final_stats=1 \
		$(BUILD)/fuzz/dprof-corpus 2>&1 | tail -n 25
	@if ls $(BUILD)/fuzz/crashes/dprof-* >/dev/null 2>&1; then \
		echo "fuzz-dprof: crashes saved in $(BUILD)/fuzz/crashes"; exit 1; fi
	@echo "fuzz-dprof: no crash in $(FUZZ_DPROF_SECONDS) seconds"

# ---- set-up ---------------------------------------------------------------

deps:
	@$(MAKE) --no-print-directory deps-deb
	@$(MAKE) --no-print-directory deps-npm

# Install missing Debian packages (as root, or through sudo).
deps-deb:
	@missing=""; for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' \
			|| missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then echo "deps: all packages present"; exit 0; fi; \
	echo "deps: installing$$missing"; \
	SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	export DEBIAN_FRONTEND=noninteractive; \
	$$SUDO apt-get update -qq </dev/null && \
	$$SUDO apt-get install -y -qq --no-install-recommends $$missing </dev/null

# The npm packages of the tests, at the versions of tests/package.json, into
# tests/node_modules (git-ignored; no lock file).  Debian's nodejs has no
# npm of its own: the npm package brings it where nodejs did not.
deps-npm:
	@if (cd tests && npm ls --depth=0 >/dev/null 2>&1); then \
		echo "deps: npm test packages present"; exit 0; fi; \
	if ! command -v npm >/dev/null; then \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends \
			npm </dev/null || exit 1; fi; \
	echo "deps: installing the npm test packages into tests/node_modules"; \
	cd tests && npm install --no-package-lock --no-audit --no-fund --ignore-scripts </dev/null

deps-check:
	@$(MAKE) --no-print-directory deps

# ---- the demo ---------------------------------------------------------------

# Profile the demo program with the profiler of this build, then show the
# profile (the loaded view, as Devel::NYTProf::Data dumps it).
run: deps-check
	@$(MAKE) --no-print-directory run-demo

.PHONY: run-demo
run-demo: all
	@echo "== nytp run -o $(BUILD)/demo.out testdata/demo.pl"
	@$(BUILD)/nytp run -o $(BUILD)/demo.out testdata/demo.pl > /dev/null
	@$(BUILD)/nytp dump --data $(BUILD)/demo.out > $(BUILD)/demo.dump
	@echo "== nytp dump --data $(BUILD)/demo.out (its subs; the whole dump is in $(BUILD)/demo.dump)"
	@grep '^sub_subinfo	main::' $(BUILD)/demo.dump | grep -v called_by
	@$(BUILD)/nytp html -o $(BUILD)/demo-report $(BUILD)/demo.out
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

# make bench NAME...: only those benchmarks (bench/run NAME...), e.g.
# 'make bench service' or 'make bench many'; the names are not targets.
BENCH_NAMES := $(if $(filter bench,$(MAKECMDGOALS)),$(filter-out bench,$(MAKECMDGOALS)))
bench: deps-check
	@$(MAKE) --no-print-directory all
	bench/run $(BENCH_NAMES)
ifneq ($(BENCH_NAMES),)
$(BENCH_NAMES):
	@:
endif

# ---- install ------------------------------------------------------------------

install: all $(BUILD)/nytpformat.pc
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/man/man3 \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/share/doc/nytp \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions \
		$(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/nytp
	install -m 755 $(BUILD)/nytp $(DESTDIR)$(PREFIX)/bin/nytp
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 man/*.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	install -m 644 $(BUILD)/man/Devel-NYTP.3pm '$(DESTDIR)$(PREFIX)/share/man/man3/Devel::NYTP.3pm'
	install -m 644 $(BUILD)/man/Plack-Middleware-NYTP.3pm \
		'$(DESTDIR)$(PREFIX)/share/man/man3/Plack::Middleware::NYTP.3pm'
	install -m 644 completion/nytp.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/nytp
	install -m 644 completion/_nytp $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_nytp
	install -m 644 $(BUILD)/libnytpformat.a $(DESTDIR)$(PREFIX)/lib/
	install -m 644 libformat/include/nytp/*.h $(DESTDIR)$(PREFIX)/include/nytp/
	install -m 644 $(BUILD)/nytpformat.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/
	install -m 644 LICENSE README.md $(DESTDIR)$(PREFIX)/share/doc/nytp/
	install -d $(DESTDIR)$(PREFIX)/$(PERL_SITEARCH)/Devel \
		$(DESTDIR)$(PREFIX)/$(PERL_SITEARCH)/auto/Devel/NYTP \
		$(DESTDIR)$(PREFIX)/$(PERL_SITEARCH)/Plack/Middleware
	install -m 644 $(PROFILER_PM) $(DESTDIR)$(PREFIX)/$(PERL_SITEARCH)/Devel/NYTP.pm
	install -m 644 $(MIDDLEWARE_PM) $(DESTDIR)$(PREFIX)/$(PERL_SITEARCH)/Plack/Middleware/NYTP.pm
	install -m 755 $(PROFILER_SO) $(DESTDIR)$(PREFIX)/$(PERL_SITEARCH)/auto/Devel/NYTP/NYTP.so

clean:
	rm -rf $(BUILD)
