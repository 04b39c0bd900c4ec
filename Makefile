# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# flowsketch build.  `make` builds the BPF objects (clang -target bpf, CO-RE
# against a vmlinux.h generated from this kernel's BTF), embeds them in
# libbpf skeletons, and builds the daemon, the CLI, tools and tests.
#
#   make deps    install the Debian packages the build and tests need
#   make         build everything under build/
#   make mutants unit tests rebuilt against a broken core (tests/integration/mutants.sh)
#   make test    deps + build + fuzz targets + mutants + every test (unit, datapath,
#                integration with a short run of each fuzz target, VM)
#   make fuzz    libFuzzer targets under build/fuzz/ (clang, ASan + UBSan);
#                run one with build/fuzz/NAME fuzz/corpus/NAME, or all of
#                them for FUZZ_SECONDS each with tests/integration/fuzz.sh
#   make demo    deps + build + a live demo in its own network namespaces
#   make bench   deps + build + benchmarks (ratios against in-run baselines)
#   make kmod    the kernel module (kmod/, KDIR= to pick the kernel tree)
#   make install the daemon, the CLI, their man pages and a systemd unit
#                (PREFIX, DESTDIR)
#   make clean
#   V=1          show the commands
#   BENCH_ARGS=  options for build/tools/fs-bench (see its --help), e.g. "--depth 3"
#
# Sources are found by wildcard, so adding a file needs no edit here:
#   bpf/*.bpf.c          -> build/bpf/NAME.bpf.o, build/skel/NAME.skel.h
#   bench/bpf/*.bpf.c    -> the same (programs only the benchmarks load)
#   user/lib/*.c         -> build/libflowsketch.a (shared user-space code)
#   user/flowsketchd/**.c -> build/flowsketchd
#   user/flowsketch/*.c  -> build/flowsketch
#   tools/*.c            -> build/tools/NAME (one file each)
#   bench/tools/*.c      -> the same (the benchmarks; bench/tools/*.h theirs)
#   tests/unit/test_*.c  -> build/tests/test_* (cmocka; tests/unit/*.h shared)
#   fuzz/*.c             -> build/fuzz/NAME (libFuzzer; seeds in fuzz/corpus/NAME)

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

BUILD     := build
CLANG     ?= clang
BPFTOOL   ?= bpftool
CC        ?= gcc
ARCH      := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')

CFLAGS    ?= -O2 -g
CFLAGS    += -Wall -Wextra -Werror -Wno-unused-parameter -std=gnu11 \
             -Iinclude -Iuser/lib -I$(BUILD)/skel -D_GNU_SOURCE
# Hardening of everything gcc builds (the BPF objects are clang's, with
# BPF_CFLAGS; the fuzz targets have FUZZ_CFLAGS): stack canaries, glibc's
# checked string and I/O calls (which need an optimizing build: none at
# -O0), a position-independent executable, and relocations resolved at
# start and then read-only (full RELRO).  tests/integration/hardening.sh
# checks the programs for each.  The VM's static relinks (tests/vm/lib.sh)
# take the same objects.
HARDEN_CFLAGS  := -fstack-protector-strong -fPIE \
                  $(if $(filter -O1 -O2 -O3 -Os -Og -Ofast,$(CFLAGS)),-U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2)
HARDEN_LDFLAGS := -pie -Wl,-z,relro -Wl,-z,now
CFLAGS    += $(HARDEN_CFLAGS)
LDFLAGS   += $(HARDEN_LDFLAGS)
LDLIBS    := -lbpf -lelf -lz -ljson-c -lm
# The CLI's full-screen top (user/flowsketch/top_screen.c).
CLI_LDLIBS := -lncursesw
# The daemon's HTTP server for --metrics (user/flowsketchd/service/metrics.h), its
# TLS and basic auth (webconfig.h: libyaml, GnuTLS; basicauth.h: libcrypt).
DAEMON_LDLIBS := -lmicrohttpd -lpthread -lyaml -lgnutls -lcrypt

# clang -target bpf does not search the host's multiarch include dirs;
# pass them explicitly (as libbpf-bootstrap does) for asm/types.h & co.
CLANG_BPF_SYS_INCLUDES := $(shell $(CLANG) -v -E - </dev/null 2>&1 | \
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
              -Wno-unused-function -I$(BUILD) -Iinclude -Ibpf \
              $(CLANG_BPF_SYS_INCLUDES)

# The benchmarks' programs and tools live with them (bench/) and build
# beside the others: make finds a NAME.bpf.c or fs-NAME.c in either folder.
vpath %.bpf.c bpf bench/bpf
vpath fs-%.c tools bench/tools
BPF_SRCS   := $(wildcard bpf/*.bpf.c bench/bpf/*.bpf.c)
BPF_OBJS   := $(patsubst %.bpf.c,$(BUILD)/bpf/%.bpf.o,$(notdir $(BPF_SRCS)))
SKELS      := $(patsubst %.bpf.c,$(BUILD)/skel/%.skel.h,$(notdir $(BPF_SRCS)))
BPF_HDRS   := $(wildcard bpf/*.h) $(wildcard include/flowsketch/*.h)

LIB_SRCS   := $(wildcard user/lib/*.c)
LIB_OBJS   := $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRCS))
LIB        := $(BUILD)/libflowsketch.a
USER_HDRS  := $(wildcard user/lib/*.h) $(wildcard user/*/*.h) $(wildcard user/*/*/*.h) \
              $(wildcard include/flowsketch/*.h)

DAEMON_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard user/flowsketchd/*.c user/flowsketchd/*/*.c))
# The daemon includes across its folders as "folder/x.h".
$(DAEMON_OBJS): CFLAGS += -Iuser/flowsketchd
CLI_OBJS    := $(patsubst %.c,$(BUILD)/%.o,$(wildcard user/flowsketch/*.c))
TOOLS       := $(patsubst %.c,$(BUILD)/tools/%,$(notdir $(wildcard tools/*.c bench/tools/*.c)))
TESTS       := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))

PROGS := $(BUILD)/flowsketchd $(BUILD)/flowsketch
# flowsketchd(8), flowsketch(8): man/NAME.8.in with the options the program
# prints from its tables (--roff) in place of its line @OPTIONS@.
MANS  := $(BUILD)/man/flowsketchd.8 $(BUILD)/man/flowsketch.8

.PHONY: all deps test demo bench kmod install clean fuzz mutants
# Keep the BPF objects: make would delete them as intermediates of the
# skeletons, and they are what `llvm-objdump -d` and `bpftool prog load` want.
.SECONDARY: $(BPF_OBJS)
.DEFAULT_GOAL := all

all: $(SKELS) $(LIB) $(PROGS) $(MANS) $(TOOLS) $(TESTS)

deps:
	$(Q)./scripts/deps.sh

# --- BPF ------------------------------------------------------------------
$(BUILD)/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(BUILD)/bpf/%.bpf.o: %.bpf.c $(BPF_HDRS) $(BUILD)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp.o
	$(Q)$(BPFTOOL) gen object $@ $@.tmp.o && rm -f $@.tmp.o

# The wide-layout build of the ingress programs includes them whole.
$(BUILD)/bpf/flowsketch_wide.bpf.o: bpf/flowsketch.bpf.c
# So does the sampled Count-Min build of the benchmark programs.
$(BUILD)/bpf/bench_nitro.bpf.o $(BUILD)/bpf/bench_nitro1.bpf.o: bench/bpf/bench.bpf.c

$(BUILD)/skel/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*) > $@.tmp && mv $@.tmp $@

# --- user space -------------------------------------------------------------
$(BUILD)/%.o: %.c $(USER_HDRS) $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/flowsketchd: $(DAEMON_OBJS) $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) $(DAEMON_LDLIBS) -o $@

$(BUILD)/flowsketch: $(CLI_OBJS) $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) $(CLI_LDLIBS) -o $@

$(BUILD)/man/%.8: man/%.8.in $(BUILD)/%
	$(call msg,MAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BUILD)/$* --roff > $@.opts
	$(Q)sed -e '/^@OPTIONS@$$/{r $@.opts' -e 'd;}' $< > $@ && rm -f $@.opts

$(BUILD)/tools/%: %.c $(wildcard tools/*.h bench/tools/*.h) $(LIB) $(USER_HDRS) $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< $(LIB) $(LDLIBS) -o $@

$(BUILD)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(LIB) $(USER_HDRS) $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -Itests/unit $< $(TEST_OBJS) $(LIB) $(LDLIBS) -lcmocka -o $@

# The daemon's BPF-free parts, linked into their own unit tests.
FSD_PURE_OBJS := $(patsubst %,$(BUILD)/user/flowsketchd/%.o,windows/topk windows/candidates windows/history)
$(BUILD)/tests/test_topk $(BUILD)/tests/test_history: $(FSD_PURE_OBJS)
$(BUILD)/tests/test_topk $(BUILD)/tests/test_history: TEST_OBJS := $(FSD_PURE_OBJS)
$(BUILD)/tests/test_blockset: $(BUILD)/user/flowsketchd/blocklist/blockset.o
$(BUILD)/tests/test_blockset: TEST_OBJS := $(BUILD)/user/flowsketchd/blocklist/blockset.o
$(BUILD)/tests/test_blockset: CFLAGS += -Iuser/flowsketchd
FSD_BLOCKFILE_OBJS := $(patsubst %,$(BUILD)/user/flowsketchd/%.o,blocklist/blockfile blocklist/blockset \
                      base/safedir base/log base/crashpoint)
$(BUILD)/tests/test_blockfile: $(FSD_BLOCKFILE_OBJS)
$(BUILD)/tests/test_blockfile: TEST_OBJS := $(FSD_BLOCKFILE_OBJS)
$(BUILD)/tests/test_blockfile: CFLAGS += -Iuser/flowsketchd
$(BUILD)/tests/test_blockpace: $(BUILD)/user/flowsketchd/blocklist/blockpace.o
$(BUILD)/tests/test_blockpace: TEST_OBJS := $(BUILD)/user/flowsketchd/blocklist/blockpace.o
$(BUILD)/tests/test_blockpace: CFLAGS += -Iuser/flowsketchd
$(BUILD)/tests/test_topk $(BUILD)/tests/test_history: CFLAGS += -Iuser/flowsketchd

# The request parser and the command list it reads (commands.h), as the
# fuzzer links them: pure.
FSD_REQUEST_OBJS := $(patsubst %,$(BUILD)/user/flowsketchd/%.o,service/request base/jsoncheck)
$(BUILD)/tests/test_commands: $(FSD_REQUEST_OBJS)
$(BUILD)/tests/test_commands: TEST_OBJS := $(FSD_REQUEST_OBJS)
$(BUILD)/tests/test_commands: CFLAGS += -Iuser/flowsketchd

# The policy file's parser: pure.
FSD_POLICY_OBJS := $(BUILD)/user/flowsketchd/policy/policy_file.o $(BUILD)/user/flowsketchd/base/smallfile.o
$(BUILD)/tests/test_policy_file: $(FSD_POLICY_OBJS)
$(BUILD)/tests/test_policy_file: TEST_OBJS := $(FSD_POLICY_OBJS)
$(BUILD)/tests/test_policy_file: CFLAGS += -Iuser/flowsketchd

# The policy's decisions: the policy and its parser, with the blocklist it
# reads (never started: no map is touched) and what that links.
FSD_POLICY_TEST_OBJS := $(patsubst %,$(BUILD)/user/flowsketchd/%.o,policy/policy policy/policy_file \
                        blocklist/blocklist blocklist/blockfile blocklist/blockset blocklist/blockpace \
                        datapath/object base/answer base/safedir base/smallfile base/log base/crashpoint)
$(BUILD)/tests/test_policy: $(FSD_POLICY_TEST_OBJS)
$(BUILD)/tests/test_policy: TEST_OBJS := $(FSD_POLICY_TEST_OBJS)
$(BUILD)/tests/test_policy: CFLAGS += -Iuser/flowsketchd

# The rotation against the real datapath (BPF_PROG_TEST_RUN): the daemon's
# parts that close windows and file reports, with the pure ones they use.
FSD_ROTATION_OBJS := $(patsubst %,$(BUILD)/user/flowsketchd/%.o,windows/rotation windows/reports base/log windows/winstore windows/statebudget base/crashpoint) \
                     $(FSD_PURE_OBJS)
$(BUILD)/tests/test_rotation: $(FSD_ROTATION_OBJS)
$(BUILD)/tests/test_rotation: TEST_OBJS := $(FSD_ROTATION_OBJS)
$(BUILD)/tests/test_rotation: CFLAGS += -Iuser/flowsketchd

# The window files, in a temporary directory of the test's own: the store
# with the pure parts it fills.
FSD_WINSTORE_OBJS := $(patsubst %,$(BUILD)/user/flowsketchd/%.o,windows/winstore windows/statebudget base/log base/crashpoint) \
                     $(FSD_PURE_OBJS)
$(BUILD)/tests/test_winstore $(BUILD)/tests/test_state_budget: $(FSD_WINSTORE_OBJS)
$(BUILD)/tests/test_winstore $(BUILD)/tests/test_state_budget: TEST_OBJS := $(FSD_WINSTORE_OBJS)
$(BUILD)/tests/test_winstore $(BUILD)/tests/test_state_budget: CFLAGS += -Iuser/flowsketchd

# /metrics' password checks (libxcrypt's bcrypt, GnuTLS's HMAC).
FSD_AUTH_OBJS := $(patsubst %,$(BUILD)/user/flowsketchd/%.o,service/basicauth base/log)
$(BUILD)/tests/test_basicauth: $(FSD_AUTH_OBJS)
$(BUILD)/tests/test_basicauth: TEST_OBJS := $(FSD_AUTH_OBJS)
$(BUILD)/tests/test_basicauth: CFLAGS += -Iuser/flowsketchd
$(BUILD)/tests/test_basicauth: LDLIBS += -lgnutls -lcrypt

# --- mutants ------------------------------------------------------------------
# Unit tests rebuilt, with the shared library they test, against a broken
# core (the FS_MUTANT_* blocks in include/flowsketch): each must fail, or
# the test could not catch that bug.  tests/integration/mutants.sh runs
# them.  NAME:TEST:FLAG
MUTANTS := cms_row0:test_cms:FS_MUTANT_CMS_ROW0 \
           report_no_flags:test_model:FS_MUTANT_REPORT_NO_FLAGS \
           report_crossing:test_model:FS_MUTANT_REPORT_CROSSING \
           report_skip_at:test_model:FS_MUTANT_REPORT_SKIP_AT \
           segs_one:test_model:FS_MUTANT_SEGS_ONE \
           spill_lost:test_layouts:FS_MUTANT_SPILL_LOST \
           spill_twice:test_layouts:FS_MUTANT_SPILL_TWICE \
           spill_edge:test_layouts:FS_MUTANT_SPILL_EDGE \
           bloom_shortest:test_bloom:FS_MUTANT_BLOOM_SHORTEST \
           packed_unbounded:test_merge:FS_MUTANT_PACKED_UNBOUNDED \
           spread_no_scale:test_spread:FS_MUTANT_SPREAD_NO_SCALE \
           prefix_no_scale:test_prefix:FS_MUTANT_PREFIX_NO_SCALE \
           prefix_own_max:test_prefix:FS_MUTANT_PREFIX_OWN_MAX \
           spread_own_max:test_spread:FS_MUTANT_SPREAD_OWN_MAX \
           bloom_fine4_span:test_bloom:FS_MUTANT_BLOOM_FINE4_SPAN \
           nitro_noscale:test_cms_sampled:FS_MUTANT_NITRO_NOSCALE \
           spread_no_port:test_datapath:FS_MUTANT_SPREAD_NO_PORT \
           sample_raw:test_sample:FS_MUTANT_SAMPLE_RAW \
           sample_full_drop:test_sample:FS_MUTANT_SAMPLE_FULL_DROP \
           sample_merge_limit:test_sample:FS_MUTANT_SAMPLE_MERGE_LIMIT \
           sample_export_limit:test_sample:FS_MUTANT_SAMPLE_EXPORT_LIMIT \
           sample_z_no_hll:test_sample:FS_MUTANT_SAMPLE_Z_NO_HLL \
           cms_undercount:test_accuracy:FS_MUTANT_CMS_UNDERCOUNT \
           cms_one_column:test_accuracy:FS_MUTANT_CMS_ONE_COLUMN \
           hll_rank_bias:test_accuracy:FS_MUTANT_HLL_RANK_BIAS
MUTANT_BINS := $(foreach m,$(MUTANTS),$(BUILD)/mutants/$(word 1,$(subst :, ,$(m))))

# A mutant's BPF programs too: the ingress programs built with its flag,
# as a skeleton of the same name in a directory of its own, searched
# before build/skel, so that its test loads the broken datapath.
define mutant_rule
$(BUILD)/mutant-skel/$(word 1,$(1))/flowsketch.skel.h: bpf/flowsketch.bpf.c $(BPF_HDRS) $(BUILD)/vmlinux.h
	$$(call msg,MUTANT,$$@)
	$(Q)mkdir -p $$(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -D$(word 3,$(1)) -c $$< -o $$(@D)/flowsketch.tmp.o
	$(Q)$(BPFTOOL) gen object $$(@D)/flowsketch.bpf.o $$(@D)/flowsketch.tmp.o && rm -f $$(@D)/flowsketch.tmp.o
	$(Q)$(BPFTOOL) gen skeleton $$(@D)/flowsketch.bpf.o name flowsketch > $$@.tmp && mv $$@.tmp $$@

$(BUILD)/mutants/$(word 1,$(1)): tests/unit/$(word 2,$(1)).c $(LIB_SRCS) $(wildcard tests/unit/*.h) $(USER_HDRS) $(SKELS) $(BUILD)/mutant-skel/$(word 1,$(1))/flowsketch.skel.h
	$$(call msg,MUTANT,$$@)
	$(Q)mkdir -p $$(@D)
	$(Q)$(CC) -I$(BUILD)/mutant-skel/$(word 1,$(1)) $(CFLAGS) $(LDFLAGS) -D$(word 3,$(1)) -Itests/unit $$< $(LIB_SRCS) $(LDLIBS) -lcmocka -o $$@
endef
$(foreach m,$(MUTANTS),$(eval $(call mutant_rule,$(subst :, ,$(m)))))

mutants: $(MUTANT_BINS)

# --- fuzz targets -------------------------------------------------------------
# Every target is linked with all the code that parses what arrives from
# outside: the shared library, the CLI without main(), and the daemon's
# parts that need no BPF (a target uses what it calls; the rest costs only
# link time).  Objects are built again with clang and the sanitizers, under
# build/fuzz/obj, apart from the gcc build.
FUZZ_CC     ?= clang
FUZZ_SAN    := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS := -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
               -Wall -Wextra -Werror -Wno-unused-parameter -std=gnu11 \
               -Wno-unknown-warning-option \
               -Iinclude -Iuser/lib -Iuser/flowsketch -Iuser/flowsketchd \
               -D_GNU_SOURCE
FUZZ_FSD    := $(patsubst %,user/flowsketchd/%.c,service/request base/jsoncheck base/secret base/proclocks base/log \
                                                   policy/policy_file base/smallfile)
FUZZ_CLI    := $(filter-out user/flowsketch/main.c,$(wildcard user/flowsketch/*.c))
FUZZ_OBJS   := $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(LIB_SRCS) $(FUZZ_CLI) $(FUZZ_FSD))
FUZZERS     := $(patsubst fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard fuzz/*.c))

# Kept, as the BPF objects are: make would delete them as intermediates.
.SECONDARY: $(FUZZ_OBJS)
fuzz: $(FUZZERS)

$(BUILD)/fuzz/obj/%.o: %.c $(USER_HDRS)
	$(call msg,FUZZCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(BUILD)/fuzz/%: fuzz/%.c $(wildcard fuzz/*.h) $(FUZZ_OBJS) $(USER_HDRS)
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_OBJS) $(LDLIBS) $(CLI_LDLIBS) -o $@

# --- kernel module ----------------------------------------------------------
KDIR ?= /lib/modules/$(shell uname -r)/build
kmod:
	$(Q)$(MAKE) -C $(KDIR) M=$(CURDIR) modules

# --- entry points -----------------------------------------------------------
test: deps
	$(Q)$(MAKE) --no-print-directory all fuzz mutants
	$(Q)./tests/run.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)./scripts/demo.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)./bench/run.sh $(BENCH_ARGS)

PREFIX ?= /usr/local
SYSTEMD_DIR ?= /lib/systemd/system
install: $(PROGS) $(MANS)
	$(Q)install -D -m 0755 $(BUILD)/flowsketchd $(DESTDIR)$(PREFIX)/sbin/flowsketchd
	$(Q)install -D -m 0755 $(BUILD)/flowsketch $(DESTDIR)$(PREFIX)/bin/flowsketch
	$(Q)install -D -m 0644 -t $(DESTDIR)$(PREFIX)/share/man/man8 $(MANS)
	$(Q)install -D -m 0644 -t $(DESTDIR)$(PREFIX)/share/flowsketch dist/flowsketch-accuracy.rules.yml dist/fleet_top.sql
	$(Q)sed 's|/usr/local/sbin/|$(PREFIX)/sbin/|' dist/flowsketchd.service | \
		install -D -m 0644 /dev/stdin $(DESTDIR)$(SYSTEMD_DIR)/flowsketchd.service

clean:
	$(Q)rm -rf $(BUILD)
	$(Q)rm -f kmod/*.o kmod/*.ko kmod/*.mod* kmod/.*.cmd .*.cmd Module.symvers modules.order
