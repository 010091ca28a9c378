#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes rocm-smi-showtopo-mi300x.txt and rocm-smi-showtopo-mi250x.txt
(README.md here): what `rocm-smi --showtopo` prints, through copies of its
own printing functions (printLogSpacer, printTableRow, printLog and
showWeightTopology, showHopsTopology, showTypeTopology,
showNumaTopology, python_smi_tools/rocm_smi.py @a1295714 of
ROCm/rocm_smi_lib, lines 860-1040 and 3218-3390; main prints two newlines
and the header spacer first, the footer spacer last, lines 4293-4296 and
4558-4559).  The link figures are those of the machines: 8 MI300X on an
xGMI mesh (every pair one hop, weight 15); 4 MI250X packages (8 GCDs),
GCDs of one package and some of the neighbours joined by xGMI, the rest
two xGMI hops away (weight 30) or over PCIe (weight 40, another NUMA
node).  Run from this folder:

    python3 make_rocm_smi.py
"""
import io

appWidth = 90


def printLogSpacer(out, displayString=None, fill='='):
    resizeValue = appWidth
    if displayString:
        if len(displayString) % 2:
            displayString += fill
        logSpacer = fill * int((resizeValue - (len(displayString))) / 2) + \
            displayString + fill * int((resizeValue - (len(displayString))) / 2)
    else:
        logSpacer = fill * resizeValue
    print(logSpacer, file=out)


def printTableRow(out, space, displayString, v_delim=" "):
    if space:
        print(space % (displayString), end=v_delim, file=out)
    else:
        print(displayString, end=v_delim, file=out)


def matrix(out, title, n, cell):
    printLogSpacer(out, title)
    printTableRow(out, None, '      ')
    for row in range(n):
        printTableRow(out, '%-12s', 'GPU%d' % row)
    print(file=out)
    for gpu1 in range(n):
        printTableRow(out, '%-6s', 'GPU%d' % gpu1)
        for gpu2 in range(n):
            printTableRow(out, '%-12s', '0' if gpu1 == gpu2 else
                          cell(gpu1, gpu2))
        print(file=out)


def showtopo(n, weight, hops, kind, numa):
    out = io.StringIO()
    print('\n', file=out)
    printLogSpacer(out, ' ROCm System Management Interface ')
    matrix(out, ' Weight between two GPUs ', n, weight)
    print(file=out)
    matrix(out, ' Hops between two GPUs ', n, hops)
    print(file=out)
    matrix(out, ' Link Type between two GPUs ', n, kind)
    print(file=out)
    printLogSpacer(out, ' Numa Nodes ')
    for d in range(n):
        print('GPU[%s]\t\t: %s: %s' % (d, '(Topology) Numa Node', numa(d)),
              file=out)
        print('GPU[%s]\t\t: %s: %s' % (d, '(Topology) Numa Affinity',
                                         numa(d)), file=out)
    printLogSpacer(out, ' End of ROCm SMI Log ')
    return out.getvalue()


def write(path, text):
    with open(path, 'w') as f:
        f.write(text)


write('rocm-smi-showtopo-mi300x.txt',
      showtopo(8, lambda a, b: 15, lambda a, b: 1, lambda a, b: 'XGMI',
               lambda d: d // 4))

# MI250X: GCDs 2k and 2k+1 share a package; xGMI between neighbouring
# packages on one NUMA node, PCIe across the two halves.
def mi250x(a, b):
    if a // 2 == b // 2 or (a // 4 == b // 4 and a % 2 == b % 2):
        return 'XGMI', 1, 15
    if a // 4 == b // 4:
        return 'XGMI', 2, 30
    return 'PCIE', 2, 40


write('rocm-smi-showtopo-mi250x.txt',
      showtopo(8, lambda a, b: mi250x(a, b)[2], lambda a, b: mi250x(a, b)[1],
               lambda a, b: mi250x(a, b)[0], lambda d: d // 4))
