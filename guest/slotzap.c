// SPDX-License-Identifier: GPL-2.0
/*
 * slotzap MIB delete|munmap|dirtylog|destroy [busy]: populate a memslot of
 * MIB MiB with 4 KiB G-stage mappings, then delete the memslot, munmap its
 * memory, switch dirty logging on for it (which write-protects the whole
 * slot) or destroy the VM (close its vCPU and VM file descriptors, which
 * frees the G-stage root and tables), and print how long that took.
 *
 * With busy, a second process spins on the same CPU while the slot is
 * zapped, so the CPU is wanted (need_resched()) and a walk that may yield
 * mmu_lock does: the longest hold then shows how long a walk goes on between
 * two chances to yield, as when vCPU threads or other tasks share the CPU.
 * Without it, nothing waits, and the longest hold is the whole zap's work.
 *
 * The memory is anonymous with MADV_NOHUGEPAGE, so every G-stage leaf is a
 * 4 KiB one. One vCPU, in VS-mode with vsatp off, stores to every page of
 * the slot and then to an address outside every memslot, which ends KVM_RUN
 * with KVM_EXIT_MMIO. Lock statistics, if the kernel has them, are cleared
 * right before the delete, munmap, flag change or close and switched off right
 * after it, so that the mmu_lock figures of /proc/lock_stat (guest/lockstat
 * prints them) are those of that operation alone: the populating faults and
 * the VM's destruction (unless it is the operation) are not in them. Exits
 * with 1 on any failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SLOT_GPA 0x80000000UL
#define EXIT_GPA 0x1000UL
#define PAGE 4096UL

/*
 * The guest: a0 = the first page, a1 = PAGE, a2 = the end, a3 = EXIT_GPA.
 * The store goes 1 KiB into each page, past the code in the first one.
 */
extern const char guest_code[], guest_code_end[];
asm(".pushsection .rodata\n"
    ".globl guest_code, guest_code_end\n"
    "guest_code:\n"
    "1:	sd	a0, 1024(a0)\n"
    "	add	a0, a0, a1\n"
    "	bltu	a0, a2, 1b\n"
    "	sd	zero, 0(a3)\n"
    "2:	j	2b\n"
    "guest_code_end:\n"
    ".popsection\n");

static void die(const char *what)
{
	fprintf(stderr, "slotzap: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Write @val to @path if it exists (a kernel without LOCK_STAT has none). */
static void put(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0) {
		if (errno == ENOENT)
			return;
		die(path);
	}
	if (write(fd, val, strlen(val)) < 0)
		die(path);
	close(fd);
}

static void set_core(int vcpu, unsigned long idx, unsigned long val)
{
	struct kvm_one_reg reg = {
		.id = KVM_REG_RISCV | KVM_REG_SIZE_U64 | KVM_REG_RISCV_CORE |
		      idx,
		.addr = (uintptr_t)&val,
	};

	if (ioctl(vcpu, KVM_SET_ONE_REG, &reg))
		die("KVM_SET_ONE_REG");
}

/* Start a process that spins on the CPU this one is pinned to. */
static pid_t start_spinner(void)
{
	int fds[2];
	pid_t pid;
	char c;

	if (pipe(fds))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		close(fds[0]);
		if (write(fds[1], "x", 1) != 1)
			_exit(1);
		/* Hold no reference to the VM: destroy closes the last one. */
		closefrom(3);
		for (;;)
			;
	}
	close(fds[1]);
	if (read(fds[0], &c, 1) != 1)
		die("spinner");
	close(fds[0]);
	return pid;
}

int main(int argc, char **argv)
{
	struct kvm_userspace_memory_region region = { 0 };
	unsigned long size;
	struct kvm_run *run;
	int kvm, vm, vcpu;
	double t0, t1, t2, t3;
	long run_size;
	pid_t spinner = 0;
	const char *op;
	int busy;
	cpu_set_t cpus;
	char *mem;

	busy = argc == 4 && !strcmp(argv[3], "busy");
	op = argc > 2 ? argv[2] : "";
	if ((argc != 3 && !busy) || atol(argv[1]) <= 0 ||
	    (strcmp(op, "delete") && strcmp(op, "munmap") &&
	     strcmp(op, "dirtylog") && strcmp(op, "destroy"))) {
		fprintf(stderr,
			"usage: slotzap MIB delete|munmap|dirtylog|destroy [busy]\n");
		return 1;
	}
	size = atol(argv[1]) << 20;
	if (busy) {
		CPU_ZERO(&cpus);
		CPU_SET(0, &cpus);
		if (sched_setaffinity(0, sizeof(cpus), &cpus))
			die("sched_setaffinity");
	}

	kvm = open("/dev/kvm", O_RDWR);
	if (kvm < 0)
		die("/dev/kvm");
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		die("KVM_CREATE_VM");
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		die("mmap");
	if (madvise(mem, size, MADV_NOHUGEPAGE))
		die("madvise");
	memcpy(mem, guest_code, guest_code_end - guest_code);
	region.guest_phys_addr = SLOT_GPA;
	region.memory_size = size;
	region.userspace_addr = (uintptr_t)mem;
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region))
		die("KVM_SET_USER_MEMORY_REGION");

	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0)
		die("KVM_CREATE_VCPU");
	run_size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (run_size < 0)
		die("KVM_GET_VCPU_MMAP_SIZE");
	run = mmap(NULL, run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	if (run == MAP_FAILED)
		die("mmap kvm_run");
	/* The spinner must not keep the vCPU's file through this mapping. */
	if (madvise(run, run_size, MADV_DONTFORK))
		die("madvise kvm_run");
	set_core(vcpu, KVM_REG_RISCV_CORE_REG(regs.pc), SLOT_GPA);
	set_core(vcpu, KVM_REG_RISCV_CORE_REG(regs.a0), SLOT_GPA);
	set_core(vcpu, KVM_REG_RISCV_CORE_REG(regs.a1), PAGE);
	set_core(vcpu, KVM_REG_RISCV_CORE_REG(regs.a2), SLOT_GPA + size);
	set_core(vcpu, KVM_REG_RISCV_CORE_REG(regs.a3), EXIT_GPA);

	t0 = now_ms();
	if (ioctl(vcpu, KVM_RUN, 0))
		die("KVM_RUN");
	t1 = now_ms();
	if (run->exit_reason != KVM_EXIT_MMIO || !run->mmio.is_write ||
	    run->mmio.phys_addr != EXIT_GPA) {
		fprintf(stderr,
			"slotzap: the guest stopped with exit %u at 0x%llx, not its store to 0x%lx\n",
			run->exit_reason,
			(unsigned long long)run->mmio.phys_addr, EXIT_GPA);
		return 1;
	}
	if (*(unsigned long *)(mem + size - PAGE + 1024) !=
	    SLOT_GPA + size - PAGE) {
		fprintf(stderr,
			"slotzap: the guest's store to the last page is not in it\n");
		return 1;
	}

	if (busy)
		spinner = start_spinner();
	put("/proc/lock_stat", "0");
	t2 = now_ms();
	if (!strcmp(op, "delete")) {
		region.memory_size = 0;
		if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region))
			die("KVM_SET_USER_MEMORY_REGION (delete)");
	} else if (!strcmp(op, "dirtylog")) {
		region.flags = KVM_MEM_LOG_DIRTY_PAGES;
		if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region))
			die("KVM_SET_USER_MEMORY_REGION (dirty logging)");
	} else if (!strcmp(op, "destroy")) {
		/* The last reference to the VM goes with the VM's descriptor. */
		if (munmap(run, run_size) || close(vcpu) || close(vm))
			die("destroying the VM");
	} else if (munmap(mem, size)) {
		die("munmap");
	}
	t3 = now_ms();
	put("/proc/sys/kernel/lock_stat", "0");
	if (spinner) {
		kill(spinner, SIGKILL);
		waitpid(spinner, NULL, 0);
	}
	printf("slotzap: %lu pages populated in %.0f ms, %s%s took %.1f ms\n",
	       size / PAGE, t1 - t0, op, busy ? " (CPU busy)" : "",
	       t3 - t2);
	return 0;
}
