#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes examples/nccl-topo-dgx-a100.xml and nccl-topo-dgx-h100.xml here
(README.md here).

The elements and attributes are those NCCL writes to NCCL_TOPO_DUMP_FILE
(ncclTopoDumpXmlRec, src/graph/xml.cc @5067397c lines 275-293: two spaces of
indent per level, attributes in the order they were set, "/>" for an
element without children); the machines are the DGX A100 and DGX H100 as
their user guides describe them (README.md).  Run from this folder:

    python3 make_nccl_dumps.py
"""


def el(out, depth, name, attrs, children=None):
    a = "".join(' %s="%s"' % kv for kv in attrs)
    pad = "  " * depth
    if not children:
        out.append("%s<%s%s/>" % (pad, name, a))
        return
    out.append("%s<%s%s>" % (pad, name, a))
    for c in children:
        el(out, depth + 1, *c)
    out.append("%s</%s>" % (pad, name))


def pci(busid, cls, vendor, device, speed, width, children):
    return ("pci", [("busid", busid), ("class", cls), ("vendor", vendor),
                    ("device", device), ("subsystem_vendor", vendor),
                    ("subsystem_device", "0x0000"), ("link_speed", speed),
                    ("link_width", str(width))], children)


def gpu(busid, dev, sm, device, speed, links):
    nv = [("nvlink", [("target", t), ("count", str(c)),
                      ("tclass", "0x068000")]) for t, c in links]
    return pci(busid, "0x030200", "0x10de", device, speed, 16,
               [("gpu", [("dev", str(dev)), ("sm", str(sm)),
                         ("rank", str(dev)), ("gdr", "1")], nv)])


def nic(busid, name, dev, mbps, guid, speed):
    return pci(busid, "0x020700", "0x15b3", "0x101b", speed, 16,
               [("nic", [], [("net", [
                   ("name", name), ("keep", "1"), ("dev", str(dev)),
                   ("latency", "0"),
                   ("speed", str(mbps)), ("port", "1"),
                   ("guid", "0x%x" % guid), ("maxconn", "131072"),
                   ("gdr", "1")])])])


def bridge(busid, speed, children):
    return pci(busid, "0x060400", "0x1000", "0xc010", speed, 16, children)


def cpu(numaid, affinity, vendor, family, model, children):
    return ("cpu", [("numaid", str(numaid)), ("affinity", affinity),
                    ("arch", "x86_64"), ("vendor", vendor),
                    ("familyid", str(family)), ("modelid", str(model))],
            children)


def switch_pair(up, downs, dev0, gpus, nics, sm, gdev, speed, links):
    """A PCIe switch: upstream port up, one downstream port per device."""
    kids = []
    for (port, g), d in zip(zip(downs[:2], gpus), (dev0, dev0 + 1)):
        kids.append(bridge(port, speed, [gpu(g, d, sm, gdev, speed, links)]))
    for port, n in zip(downs[2:], nics):
        kids.append(bridge(port, speed, [nic(*n, speed)]))
    return bridge(up, speed, kids)


def dgx_a100():
    # 6 NVSwitches, 2 NVLinks from every GPU to each (12 in all)
    sw = [("0000:%02x:00.0" % b, 2) for b in (0xc4, 0xc5, 0xc6, 0xc7, 0xc8,
                                               0xc9)]
    s = "16.0 GT/s PCIe"
    g = [0x07, 0x0f, 0x47, 0x4e, 0x87, 0x90, 0xb7, 0xbd]
    n = [(0x0c, "mlx5_0", 0), (0x12, "mlx5_1", 1), (0x4b, "mlx5_2", 2),
         (0x54, "mlx5_3", 3), (0x8d, "mlx5_6", 6), (0x94, "mlx5_7", 7),
         (0xba, "mlx5_8", 8), (0xcc, "mlx5_9", 9)]
    amd = ("AuthenticAMD", 23, 49)  # EPYC 7742 (Rome)
    boxes = []
    for k in range(4):
        up = 0x01 + 0x40 * k
        downs = ["0000:%02x:%02x.0" % (up + 2, p) for p in (0, 4, 8, 12)]
        nics = [("0000:%02x:00.0" % n[2 * k + i][0], n[2 * k + i][1],
                 n[2 * k + i][2], 200000, 0x1c34da0300a1b2c0 + 2 * k + i)
                for i in range(2)]
        boxes.append(switch_pair("0000:%02x:00.0" % up, downs, 2 * k,
                                 ["0000:%02x:00.0" % g[2 * k + j]
                                  for j in range(2)],
                                 nics, 80, "0x20b2", s, sw))
    storage = [nic("0000:e1:00.%d" % p, "mlx5_%d" % (4 + p), 4 + p, 200000,
                   0x1c34da0300a1b2d0 + p, s) for p in range(2)]
    return [
        cpu(1, "00000000,00000000,ffff0000,00000000", *amd,
            [bridge("0000:e0:01.1", s, storage)]),
        cpu(3, "00000000,00000000,00000000,ffff0000", *amd, boxes[:2]),
        cpu(7, "ffff0000,00000000,00000000,00000000", *amd, boxes[2:]),
    ]


def dgx_h100():
    # 4 NVSwitch chips, 5 + 4 + 4 + 5 NVLinks from every GPU (18 in all)
    sw = [("0000:%02x:00.0" % b, c) for b, c in ((0x05, 5), (0x06, 4),
                                                  (0x07, 4), (0x08, 5))]
    s = "32.0 GT/s PCIe"
    g = [0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb]
    spr = ("GenuineIntel", 6, 143)  # Xeon Platinum 8480C (Sapphire Rapids)
    sockets = [[], []]
    for k in range(8):
        up = g[k] - 4
        sockets[k // 4].append(bridge("0000:%02x:00.0" % up, s, [
            bridge("0000:%02x:00.0" % (up + 1), s,
                   [gpu("0000:%02x:00.0" % g[k], k, 90, "0x2330", s, sw)]),
            bridge("0000:%02x:01.0" % (up + 1), s,
                   [nic("0000:%02x:00.0" % (g[k] + 1), "mlx5_%d" % k, k,
                        400000, 0x946dae03009f1e00 + k, s)])]))
    sockets[0].append(bridge("0000:40:01.0", s, [
        nic("0000:41:00.%d" % p, "mlx5_%d" % (8 + p), 8 + p, 400000,
            0x946dae03009f1e10 + p, s) for p in range(2)]))
    aff = ("00000000,00000000,00000000,ffffffff,ffffffff,ffffffff",
           "ffffffff,ffffffff,ffffffff,00000000,00000000,00000000")
    return [cpu(k, aff[k], *spr, sockets[k]) for k in range(2)]


def write(path, cpus):
    out = []
    el(out, 0, "system", [("version", "1")], cpus)
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


write("../../../examples/nccl-topo-dgx-a100.xml", dgx_a100())
write("nccl-topo-dgx-h100.xml", dgx_h100())
