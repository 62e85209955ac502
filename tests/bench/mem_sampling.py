#!/usr/bin/env python3
"""mem_sampling.py - what one pass of the memory-sampling fallback costs (run/limits.c,
run/wait.c mem_sample()): a parent touches SHARED MiB and forks N children that share it, then
every process of the tree is read N_PASSES times from /proc the two ways the sampler can:
statm (the resident size: counters) and smaps_rollup (the proportional set size: the kernel
walks the page tables). Prints ms per pass for each and the two sums (MiB). No network.

usage: tests/bench/mem_sampling.py [N [SHARED_MIB [N_PASSES]]]   (default 120 64 20)
"""
import os
import sys
import time


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 120
    shared_mib = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    passes = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    shared = bytearray(shared_mib << 20)
    for i in range(0, len(shared), 4096):
        shared[i] = 1
    r, w = os.pipe()
    kids = []
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            os.close(w)
            os.read(r, 1)  # until the parent closes its end
            os._exit(0)
        kids.append(pid)
    os.close(r)
    pids = [os.getpid()] + kids

    def one(name, field):
        total = 0
        for p in pids:
            with open("/proc/%d/%s" % (p, name)) as f:
                text = f.read()
            if name == "statm":
                total += int(text.split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
            else:
                for line in text.splitlines():
                    if line.startswith(field + ":"):
                        total += int(line.split()[1])
        return total

    for name, field in (("statm", ""), ("smaps_rollup", "Pss")):
        t = time.perf_counter()
        for _ in range(passes):
            kb = one(name, field)
        ms = (time.perf_counter() - t) / passes * 1000
        print("%-13s %8.2f ms per pass  sum %7d MiB  (%d processes)" % (name, ms, kb // 1024, len(pids)))
    os.close(w)
    for k in kids:
        os.waitpid(k, 0)


if __name__ == "__main__":
    main()
