# RISC-V KVM G-stage series: rig entry points. See README.md.
SHELL := /bin/bash
S := scripts

.PHONY: help deps base tree export checkpatch bisect kernel run test bench harness mail clean

help:
	@echo "make deps        install host packages (root; apt pinning, nothing upgraded)"
	@echo "make tree        base + git am patches/ -> out/linux, branch series"
	@echo "make export      re-export patches/ from branch series"
	@echo "make checkpatch  checkpatch.pl --strict on every patch"
	@echo "make bisect      every prefix builds; no new W=1/sparse warning"
	@echo "make kernel      build the series kernel (VARIANT=min|debug|mod)"
	@echo "make run         main job: build, boot h=true, dirty_log_perf_test (DLPT_ARGS=...)"
	@echo "make test        everything; ends with 'N passed, N failed'"
	@echo "make bench       benchmark: bench/experiments (EXPERIMENTS=..., REPS=5), report in results/"
	@echo "make harness     userspace G-stage harness tests only"
	@echo "make mail        mail-ready series in out/mail, re-signed by your git identity"

deps:
	$(S)/install-deps.sh

base:
	$(S)/base.sh

tree:
	$(S)/tree.sh

export:
	$(S)/export.sh

checkpatch: tree
	$(S)/checkpatch.sh

bisect: tree
	$(S)/bisect.sh

VARIANT ?= min
kernel: tree
	$(S)/kbuild.sh series $(VARIANT)

run:
	$(S)/run.sh

test:
	$(S)/test.sh

bench:
	$(S)/bench.sh

harness: tree
	$(MAKE) -C harness KSRC=$(CURDIR)/out/linux BUILD=$(CURDIR)/out/harness test

mail: tree
	$(S)/mail.sh

clean:
	rm -rf out
