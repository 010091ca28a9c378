#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the nccl-tests outputs of this folder (README.md here): what
NVIDIA's nccl-tests print, through copies of their printf formats at three
versions of NVIDIA/nccl-tests (each format below cites its line):

  a0b82b2  v2.19.6, the newest: writeDeviceReport, writeResultHeader,
           writeBenchmarkLinePreamble, writeBenchmarkLineBody,
           writePerIterReport, writeTimestamp, writeResultFooter of
           NVIDIA/nccl-tests:src/util.cu
  0b4c4cb  v2.13.6: one header for every collective, "#wrong" of "%5g"
  bc5f7cf  v2.13.0: the same, with an empty redop cell for all_gather
  863fcc8  v2.11.0: a header per collective, the "error" column "%5.0le"

The figures are those of a latency-bandwidth model of each machine (below),
printed the way nccl-tests prints its own: algbw = bytes / 1e9 / seconds,
busbw = algbw times the collective's factor (AllReduceGetBw and the others,
NVIDIA/nccl-tests:src/all_reduce.cu:59 @a0b82b2), and the average bus
bandwidth is the mean of every busbw printed, in-place included
(NVIDIA/nccl-tests:src/common.cu:895 @a0b82b2).  The NCCL log lines have
NCCL's prefix "host:pid:tid [dev] NCCL INFO" (NVIDIA/nccl:src/debug.cc).
Run from this folder:

    python3 make_nccl_tests.py
"""
import io


def float_str(value, width):
    """getFloatStr, NVIDIA/nccl-tests:src/util.cu:487-492 @a0b82b2."""
    for fmt in ("%*.2f", "%*.1f", "%*.0f"):
        s = fmt % (width, value)
        if len(s) <= width:
            return s
    return ("%*.1e" if width >= 7 else "%*.0e") % (width, value)


def time_str_old(us):
    """timeStr before v2.17, NVIDIA/nccl-tests:src/common.cu:545-551
    @0b4c4cb (the same at 863fcc8, lines 729-735)."""
    if us >= 10000.0:
        return "%7.0f" % us
    if us >= 100.0:
        return "%7.1f" % us
    return "%7.2f" % us


def sizes(lo, hi):
    s = lo
    while s <= hi:
        yield s
        s *= 2


class Model:
    """time(bytes) = lat_us + bytes / (peak GB/s * 1e3), slightly faster
    in place; factor: busbw / algbw of the collective."""

    def __init__(self, lat_us, peak_gbps, factor, in_place=0.98):
        self.lat, self.peak, self.factor, self.ip = (lat_us, peak_gbps,
                                                     factor, in_place)

    def run(self, nbytes, in_place):
        us = self.lat + nbytes / (self.peak * 1e3)
        if in_place:
            us = us * self.ip + 0.3
        alg = nbytes / 1.0e9 / (us * 1e-6)
        return us, alg, alg * self.factor


def new_report(out, prog, nthread, ngpus, lo, hi, step, procs, gpu):
    """writeDeviceReport, NVIDIA/nccl-tests:src/util.cu:623-640, 667, 687
    @a0b82b2."""
    p = lambda s: out.write(s)
    p("# nccl-tests version %s nccl-headers=%d nccl-library=%d\n"
      % ("2.19.6", 22807, 22807))
    p("# Collective test starting: %s\n" % prog)
    p("# nThread %d nGpus %d minBytes %d maxBytes %d step: %d(%s) warmup "
      "iters: %d iters: %d agg iters: %d validation: %d graph: %d "
      "unalign: %d\n" % (nthread, ngpus, lo, hi, step, "factor", 1, 20, 1,
                         1, 0, 0))
    p("#\n")
    p("# Using devices\n")
    for rank, (host, pid, dev, bus) in enumerate(procs):
        p("#  Rank %2d Group %2d Pid %6d on %10s device %2d "
          "[%04x:%02x:%02x] %s\n" % (rank, 0, pid, host, dev, 0, bus, 0,
                                     gpu))


def new_header(out, per_iter=False, stamps=False):
    """writeResultHeader, NVIDIA/nccl-tests:src/util.cu:739-760
    @a0b82b2."""
    ts_lbl = "timestamp" if stamps else ""
    ts_pad = 19 if stamps else 0
    ts_fmt = "%Y-%m-%d %H:%M:%S" if stamps else ""
    out.write("#\n")
    if per_iter:
        out.write("# %10s  %12s  %8s  %6s  %6s              out-of-place "
                  "(+ per-iteration)                                in-place "
                  "(+ per-iteration)\n" % ("", "", "", "", ""))
        f = ("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s"
             "  %7s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s %*s\n")
        out.write(f % ("size", "count", "type", "redop", "root", "time",
                       "algbw", "busbw", "#wrong", "i_min", "i_max", "i_p99",
                       "i_cv%", "time", "algbw", "busbw", "#wrong", "i_min",
                       "i_max", "i_p99", "i_cv%", ts_pad, ts_lbl))
        out.write(f % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)",
                       "(GB/s)", "", "(us)", "(us)", "(us)", "(%)", "(us)",
                       "(GB/s)", "(GB/s)", "", "(us)", "(us)", "(us)", "(%)",
                       ts_pad, ts_fmt))
    else:
        out.write("# %10s  %12s  %8s  %6s  %6s           out-of-place       "
                  "                in-place          \n"
                  % ("", "", "", "", ""))
        f = ("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  "
             "%6s  %6s %*s\n")
        out.write(f % ("size", "count", "type", "redop", "root", "time",
                       "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
                       "#wrong", ts_pad, ts_lbl))
        out.write(f % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)",
                       "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", ts_pad,
                       ts_fmt))


def row(out, model, nbytes, count, typ, op, root, block):
    """One row: the preamble "%12li  %12li  %8s  %6s  %6s" of size, count,
    type, redop and root (NVIDIA/nccl-tests:src/util.cu:457 @a0b82b2; the
    same at NVIDIA/nccl-tests:src/common.cu:600 @0b4c4cb), then block(out,
    us, algbw, busbw, in_place) out-of-place and in place, in the order of
    TimeTest and BenchTime (NVIDIA/nccl-tests:src/common.cu:938-941 and
    859-888 @a0b82b2); the busbw printed, for the average."""
    out.write("%12d  %12d  %8s  %6s  %6s" % (nbytes, count, typ, op,
                                             "%6i" % root))
    bws = []
    for in_place in (0, 1):
        us, alg, bus = model.run(nbytes, in_place)
        bws.append(bus)
        block(out, us, alg, bus, in_place)
    out.write("\n")
    return bws


def new_block(per_iter=False, stamp=None):
    """writeBenchmarkLineBody, writePerIterReport, writeTimestamp,
    NVIDIA/nccl-tests:src/util.cu:508, 568, 609 @a0b82b2."""
    def block(out, us, alg, bus, in_place):
        out.write("  %7s  %6s  %6s  %6g" % (float_str(us, 7),
                                            float_str(alg, 6),
                                            float_str(bus, 6), 0))
        if per_iter:
            out.write("  %7s  %7s  %7s  %7s" % (
                float_str(us * 0.97, 7), float_str(us * 1.09, 7),
                float_str(us * 1.08, 7), float_str(2.5, 7)))
        if in_place and stamp:
            out.write("%21s" % stamp)
    return block


def new_footer(out, prog, bws):
    """writeResultFooter, finalizeFooter, writeErrors,
    NVIDIA/nccl-tests:src/util.cu:777-780, 856, 843 @a0b82b2."""
    out.write("# %-20s : %d %s\n" % ("Out of bounds values", 0, "OK"))
    out.write("# %-20s : %g %s\n" % ("Avg bus bandwidth",
                                     sum(bws) / len(bws), ""))
    out.write("#\n")
    out.write("# Collective test concluded: %s\n" % prog)
    out.write("#\n")
    out.write("\n")


def all_reduce_8gpu():
    """all_reduce_perf -b 8 -e 128M -f 2 -g 8 on one node of 8 H100 SXM
    (NVLink 4 through NVSwitch), nccl-tests v2.19.6."""
    out = io.StringIO()
    out.write("$ ./build/all_reduce_perf -b 8 -e 128M -f 2 -g 8\n")
    procs = [("dgx-h100-01", 412873, d, b)
             for d, b in enumerate((0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab,
                                    0xba, 0xdb))]
    new_report(out, "all_reduce_perf", 1, 8, 8, 134217728, 2, procs,
               "NVIDIA H100 80GB HBM3")
    new_header(out)
    # busbw = algbw * 2 (n - 1) / n (AllReduceGetBw)
    m = Model(lat_us=14.0, peak_gbps=360.0 * 8 / 14, factor=2 * 7 / 8)
    bws = []
    for s in sizes(8, 134217728):
        bws += row(out, m, s, s // 4, "float", "sum", -1, new_block())
    new_footer(out, "all_reduce_perf", bws)
    return out.getvalue()


def reduce_scatter_per_iter():
    """reduce_scatter_perf -b 1M -e 64M -f 4 -g 4 -I 1 -S 1 on 4 A100 SXM4,
    nccl-tests v2.19.6: the per-iteration columns and the timestamp."""
    out = io.StringIO()
    procs = [("a100-node7", 90211, d, b)
             for d, b in enumerate((0x07, 0x0f, 0x47, 0x4e))]
    new_report(out, "reduce_scatter_perf", 1, 4, 1048576, 67108864, 4, procs,
               "NVIDIA A100-SXM4-80GB")
    new_header(out, per_iter=True, stamps=True)
    # busbw = algbw * (n - 1) / n (ReduceScatterGetBw)
    m = Model(lat_us=22.0, peak_gbps=180.0, factor=3 / 4)
    bws = []
    s, k = 1048576, 0
    while s <= 67108864:
        stamp = "2026-07-10 09:14:%02d" % (3 + k)
        bws += row(out, m, s, s // 4 // 4, "float", "sum", -1,
                   new_block(per_iter=True, stamp=stamp))
        s, k = s * 4, k + 1
    new_footer(out, "reduce_scatter_perf", bws)
    return out.getvalue()


def old_report(out, nthread, ngpus, lo, hi, procs, gpu, agg):
    """The report before v2.17: NVIDIA/nccl-tests:src/common.cu:873-893
    @0b4c4cb (agg=True), NVIDIA/nccl-tests:src/common.cu:1028-1044
    @863fcc8 (agg=False)."""
    if agg:
        out.write("# nThread %d nGpus %d minBytes %d maxBytes %d step: %d(%s)"
                  " warmup iters: %d iters: %d agg iters: %d validation: %d "
                  "graph: %d\n" % (nthread, ngpus, lo, hi, 2, "factor", 5, 20,
                                   1, 1, 0))
    else:
        out.write("# nThread %d nGpus %d minBytes %d maxBytes %d step: %d(%s)"
                  " warmup iters: %d iters: %d validation: %d \n"
                  % (nthread, ngpus, lo, hi, 2, "factor", 5, 20, 1))
    out.write("#\n")
    out.write("# Using devices\n")
    for rank, (host, pid, dev, bus) in enumerate(procs):
        if agg:
            out.write("#  Rank %2d Group %2d Pid %6d on %10s device %2d "
                      "[0x%02x] %s\n" % (rank, 0, pid, host, dev, bus, gpu))
        else:
            out.write("#   Rank %2d Pid %6d on %10s device %2d [0x%02x] %s\n"
                      % (rank, pid, host, dev, bus, gpu))


def v213_header(out):
    """NVIDIA/nccl-tests:src/common.cu:975-980 @0b4c4cb (lines 922-927
    @bc5f7cf)."""
    out.write("#\n")
    out.write("# %10s  %12s  %8s  %6s  %6s           out-of-place           "
              "            in-place          \n" % ("", "", "", "", ""))
    out.write("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s "
              "%6s\n" % ("size", "count", "type", "redop", "root", "time",
                         "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
                         "#wrong"))
    out.write("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s "
              " %5s\n" % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)",
                          "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""))


def v213_block(in_place_errors):
    """NVIDIA/nccl-tests:src/common.cu:543-556 @0b4c4cb."""
    def block(out, us, alg, bus, in_place):
        if in_place and not in_place_errors:
            out.write("  %7s  %6.2f  %6.2f  %5s" % (time_str_old(us), alg,
                                                    bus, "N/A"))
        else:
            out.write("  %7s  %6.2f  %6.2f  %5g" % (time_str_old(us), alg,
                                                    bus, 0))
    return block


def old_footer(out, bws, last_error):
    """NVIDIA/nccl-tests:src/common.cu:1052-1059 @0b4c4cb (1200-1202
    @863fcc8, without the last error)."""
    out.write("# Out of bounds values : %d %s\n" % (0, "OK"))
    out.write("# Avg bus bandwidth    : %g %s\n" % (sum(bws) / len(bws), ""))
    out.write("#\n")
    if last_error:
        out.write("%s\n" % "")


def info(host, pid, tid, dev, msg):
    return "%s:%d:%d [%d] NCCL INFO %s\n" % (host, pid, tid, dev, msg)


def sendrecv_2node():
    """mpirun of sendrecv_perf -b 8 -e 1G -f 2 -g 1 between two nodes of
    one A40 each over 100 Gb/s InfiniBand, NCCL_DEBUG=INFO, nccl-tests
    v2.13.6: NCCL's log lines between the report and the table and between
    rows (the other node's, forwarded by mpirun line by line), sendrecv's
    in-place #wrong "N/A" (NVIDIA/nccl-tests:src/sendrecv.cu:34 @0b4c4cb)."""
    out = io.StringIO()
    out.write("user@gpu23:~/nccl-tests$ mpirun -np 2 -H gpu23:1,gpu24:1 -x "
              "NCCL_DEBUG=INFO -x LD_LIBRARY_PATH ./build/sendrecv_perf -b 8 "
              "-e 1G -f 2 -g 1\n")
    out.write("Warning: Permanently added 'gpu24' (ED25519) to the list of "
              "known hosts.\n")
    old_report(out, 1, 1, 8, 1073741824,
               [("gpu23", 1478709, 0, 0x31), ("gpu24", 1171742, 0, 0x31)],
               "NVIDIA A40", agg=True)
    out.write(info("gpu23", 1478709, 1478709, 0,
                   "Bootstrap : Using ib0:10.10.0.23<0>"))
    out.write(info("gpu23", 1478709, 1478709, 0, "NET/IB : Using "
                   "[0]mlx5_0:1/IB ; OOB ib0:10.10.0.23<0>"))
    out.write(info("gpu23", 1478709, 1478709, 0,
                   "NCCL version 2.18.3+cuda12.2"))
    out.write(info("gpu24", 1171742, 1171742, 0, "NET/IB : Using "
                   "[0]mlx5_0:1/IB ; OOB ib0:10.10.0.24<0>"))
    out.write(info("gpu23", 1478709, 1478790, 0, "comm 0x55d0c8a41f70 rank 0 "
                   "nranks 2 cudaDev 0 busId 31000 - Init COMPLETE"))
    out.write(info("gpu24", 1171742, 1171801, 0, "comm 0x5633e2f3c2a0 rank 1 "
                   "nranks 2 cudaDev 0 busId 31000 - Init COMPLETE"))
    v213_header(out)
    out.write(info("gpu23", 1478709, 1478795, 0, "Channel 00/1 : 0[31000] -> "
                   "1[31000] [send] via NET/IB/0"))
    # 100 Gb/s: about 12 GB/s delivered; busbw = algbw (SendRecvGetBw)
    m = Model(lat_us=30.0, peak_gbps=11.6, factor=1.0, in_place=0.995)
    bws = []
    for s in sizes(8, 1073741824):
        if s == 4096:
            out.write(info("gpu24", 1171742, 1171806, 0, "Channel 00/1 : "
                           "1[31000] -> 0[31000] [receive] via NET/IB/0"))
        bws += row(out, m, s, s // 4, "float", "sum", -1,
                   v213_block(in_place_errors=False))
    old_footer(out, bws, last_error=True)
    return out.getvalue()


def all_reduce_16gpu_old():
    """mpirun -np 2 all_reduce_perf -b 8 -e 256M -f 2 -g 8 on two nodes of
    8 V100 SXM2 over 4 x 100 Gb/s InfiniBand, nccl-tests v2.11.0: the
    all_reduce header of NVIDIA/nccl-tests:src/all_reduce.cu:11-15 @863fcc8
    (redop, no root), rows of NVIDIA/nccl-tests:src/all_reduce.cu:19
    @863fcc8 and NVIDIA/nccl-tests:src/common.cu:737 @863fcc8 (the largest
    deviation, "%5.0le")."""
    out = io.StringIO()
    procs = [("dgx1-%02d" % (1 + r // 8), 23914 + 17 * (r // 8), r % 8, b)
             for r, b in enumerate((0x06, 0x07, 0x0a, 0x0b, 0x85, 0x86,
                                    0x89, 0x8a) * 2)]
    old_report(out, 1, 8, 8, 268435456, procs, "Tesla V100-SXM2-32GB",
               agg=False)
    out.write("#\n")
    out.write("# %10s  %12s  %8s  %6s            out-of-place                 "
              "      in-place          \n" % ("", "", "", ""))
    out.write("# %10s  %12s  %8s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  "
              "%5s\n" % ("size", "count", "type", "redop", "time", "algbw",
                         "busbw", "error", "time", "algbw", "busbw", "error"))
    out.write("# %10s  %12s  %8s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  "
              "%5s\n" % ("(B)", "(elements)", "", "", "(us)", "(GB/s)",
                         "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""))
    m = Model(lat_us=48.0, peak_gbps=40.0 * 16 / 30, factor=2 * 15 / 16)
    bws = []
    for s in sizes(8, 268435456):
        out.write("%12d  %12d  %8s  %6s" % (s, s // 4, "float", "sum"))
        for in_place in (0, 1):
            us, alg, bus = m.run(s, in_place)
            bws.append(bus)
            delta = 0.0 if s < 64 else 4.768e-07 * (1 + (s.bit_length() % 3))
            out.write("  %7s  %6.2f  %6.2f  %5.0e" % (time_str_old(us), alg,
                                                      bus, delta))
        out.write("\n")
    old_footer(out, bws, last_error=False)
    return out.getvalue()


def all_gather_v2130():
    """all_gather_perf -b 1K -e 16M -f 4 -g 4 on 4 RTX A6000 over PCIe,
    nccl-tests v2.13.0: the empty redop cell (opName "",
    NVIDIA/nccl-tests:src/all_gather.cu:81 and
    NVIDIA/nccl-tests:src/common.cu:577 @bc5f7cf) under a header naming
    redop and root."""
    out = io.StringIO()
    procs = [("ws-4x6000", 30512, d, b)
             for d, b in enumerate((0x01, 0x21, 0x41, 0x61))]
    # v2.13.0's report: NVIDIA/nccl-tests:src/common.cu:829-847 @bc5f7cf
    out.write("# nThread %d nGpus %d minBytes %d maxBytes %d step: %d(%s) "
              "warmup iters: %d iters: %d agg iters: %d validation: %d "
              "graph: %d\n" % (1, 4, 1024, 16777216, 4, "factor", 5, 20, 1,
                               1, 0))
    out.write("#\n")
    out.write("# Using devices\n")
    for rank, (host, pid, dev, bus) in enumerate(procs):
        out.write("#   Rank %2d Pid %6d on %10s device %2d [0x%02x] %s\n"
                  % (rank, pid, host, dev, bus, "NVIDIA RTX A6000"))
    v213_header(out)
    # busbw = algbw * (n - 1) / n (AllGatherGetBw)
    m = Model(lat_us=18.0, peak_gbps=21.0, factor=3 / 4)
    bws = []
    s = 1024
    while s <= 16777216:
        bws += row(out, m, s, s // 4 // 4, "float", "", -1,
                   v213_block(in_place_errors=True))
        s *= 4
    old_footer(out, bws, last_error=True)
    return out.getvalue()


FILES = {
    "all_reduce_8xh100_v2.19.txt": all_reduce_8gpu,
    "reduce_scatter_periter_v2.19.txt": reduce_scatter_per_iter,
    "sendrecv_2node_info_v2.13.txt": sendrecv_2node,
    "all_reduce_16xv100_v2.11.txt": all_reduce_16gpu_old,
    "all_gather_blank_redop_v2.13.0.txt": all_gather_v2130,
}

if __name__ == "__main__":
    for name, fn in FILES.items():
        with open(name, "w", encoding="ascii", newline="\n") as f:
            f.write(fn())
