#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The citation checker: everything the code and the docs cite is in the
repository.

Scans src/, include/, tools/, tests/, bench/, docs/, scripts/, README.md,
data/README.md and examples/README.md (the recorded outputs under
tests/golden/ are data, not prose) for:

  - repository paths: docs/..., data/..., src/..., tests/..., include/...,
    tools/..., bench/..., examples/..., scripts/... (a '*' in a name is a
    glob); a path followed by " @<commit>" or written "owner/repo:path" is
    another project's and is left alone;
  - bare file names ending in .c or .h in comments (and anywhere in
    Markdown), which must name a file of the repository (by its last
    component), unless they are a system or library header listed in
    EXTERNAL below;
  - a section after a Markdown file: "docs/X.md, \"Heading\"" must be a
    heading of that file, "X.md 3.1", "X.md §3.1" or "X.md section 3.1"
    a numbered heading;
  - Markdown links to local files, relative to the file that links;
  - [Key] references, which must be keys defined in docs/REFERENCES.md
    (a line beginning "[Key]" or a heading "... [Key]");
  - the forbidden forms: notes/..., a DESIGN.md that is not docs/DESIGN.md,
    and papers cited by their file numbers ("paper 003", "papers/");
    these pointed outside the repository.

    check_citations.py [REPO_ROOT]

REPO_ROOT defaults to the folder above this script's.  Exit status 0:
every citation resolves; 1: some do not (each listed as file:line: what);
2: bad usage.  Python 3 standard library only.
"""
import fnmatch
import os
import re
import sys

SCAN = ["src", "include", "tools", "tests", "bench", "docs", "scripts",
        "README.md", "data/README.md", "examples/README.md"]
SKIP_DIRS = {os.path.join("tests", "golden")}
TEXT_EXT = {".c", ".h", ".py", ".sh", ".md", ".txt"}
TEXT_NAMES = {"LAYERS", "CMakeLists.txt"}
ROOTS = ("docs", "data", "src", "tests", "include", "tools", "bench",
         "examples", "scripts")

# Headers and sources of the C library and of the libraries parplan uses,
# and files of other projects that comments name by their last component.
EXTERNAL = {
    "assert.h", "ctype.h", "dirent.h", "errno.h", "float.h", "getopt.h",
    "inttypes.h", "limits.h", "math.h", "pthread.h", "setjmp.h", "stat.h",
    "stdarg.h", "stdatomic.h", "stdbool.h", "stddef.h", "stdint.h",
    "stdio.h", "stdlib.h", "string.h", "time.h", "unistd.h", "wait.h",
    "jansson.h", "cmocka.h", "scotch.h", "cairo.h", "cairo-svg.h",
    "expat.h", "Cbc_C_Interface.h", "protobuf-c.h", "onnx.pb-c.h",
    "onnx.pb-c.c",
}

PATH_RE = re.compile(
    r"(?<![\w./:@-])/?((?:%s)/[\w./*+-]*)" % "|".join(ROOTS))
BARE_RE = re.compile(r"(?<![\w./*-])([A-Za-z_][\w*-]{2,}\.[ch])(?![\w-])")
MD_NAME_RE = re.compile(r"(?<![\w./-])([\w-]+\.md)\b")
KEY_RE = re.compile(r"(?<![\w\]\[`])\[([A-Z][A-Za-z0-9+.-]*[a-z]"
                    r"[A-Za-z0-9+.-]*|[A-Z][A-Z0-9-]+)\](?![(:\[\w])")
LINK_RE = re.compile(r"\]\(([^)\s]+)\)")
FORBIDDEN = [
    (re.compile(r"(?<![\w/.-])notes/"),
     "cites notes/, which is not in the repository"),
    (re.compile(r"(?<![\w/.-])(?<!docs/)DESIGN\.md"),
     "cites a DESIGN.md that is not docs/DESIGN.md"),
    (re.compile(r"\bpapers?\s+0\d\d\b", re.I),
     "cites a paper by its file number: use its key (docs/REFERENCES.md)"),
    (re.compile(r"(?<![\w-])papers/"),
     "cites papers/, which is not in the repository"),
    (re.compile(r"\b00[1-9]_[0-9a-f]{16}\b"),
     "cites a paper's file, which is not in the repository"),
]
SECTION_AFTER = re.compile(
    r'\s*,?\s*(?:"(?P<name>[^"]+)"|(?:§\s*|section\s+)?'
    r"(?P<num>\d+(?:\.\d+)*)(?![\w.]*\w))")
MORE_NUMS = re.compile(r"\s*(?:,|and)\s*(?:§\s*)?(?P<num>\d+(?:\.\d+)*)"
                       r"(?![\w.]*\w)")


class Text:
    """Text joined from pieces of a file, with the line of every offset."""

    def __init__(self):
        self.parts, self.starts, self.lines, self.n = [], [], [], 0

    def add(self, s, line):
        if self.parts:
            sep = "" if self.parts[-1].endswith("/") else " "
            self.parts.append(sep)
            self.n += len(sep)
        self.starts.append(self.n)
        self.lines.append(line)
        self.parts.append(s)
        self.n += len(s)

    def text(self):
        return "".join(self.parts)

    def line(self, off):
        lo, hi = 0, len(self.starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.starts[mid] <= off:
                lo = mid
            else:
                hi = mid - 1
        return self.lines[lo] if self.lines else 1


def c_pieces(src):
    """Comments and string literals of C source, as (kind, text, line)
    pieces, one per source line (comment leaders such as '**' removed)."""
    out, i, n, line = [], 0, len(src), 1
    while i < n:
        c = src[i]
        if c == "\n":
            line += 1
            i += 1
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j
            for k, ln in enumerate(src[i + 2:j].split("\n")):
                ln = re.sub(r"^\s*\**\s*", "", ln) if k else ln
                out.append(("comment", ln, line + k))
            line += src.count("\n", i, j)
            i = j + 2
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(("comment", src[i + 2:j], line))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            if c == '"':
                out.append(("string", src[i + 1:j], line))
            i = j + 1
        else:
            i += 1
    return out


class Repo:
    def __init__(self, root):
        self.root = root
        self.files, self.dirs, self.base = set(), set(), {}
        for d, subdirs, files in os.walk(root):
            subdirs[:] = [s for s in subdirs
                          if not s.startswith(".") and
                          not s.startswith("build")]
            rel = os.path.relpath(d, root)
            if rel != ".":
                self.dirs.add(rel.replace(os.sep, "/"))
            for f in files:
                p = os.path.normpath(os.path.join(rel, f)).replace(os.sep, "/")
                self.files.add(p)
                self.base.setdefault(f, []).append(p)
        self.headings = {}
        self.keys = self.read_keys()

    def exists(self, path):
        path = path.rstrip("/")
        if "*" in path:
            return any(fnmatch.fnmatch(f, path) for f in self.files) or \
                any(fnmatch.fnmatch(d, path) for d in self.dirs)
        return path in self.files or path in self.dirs

    def md_headings(self, path):
        if path not in self.headings:
            names, nums = set(), set()
            try:
                with open(os.path.join(self.root, path), encoding="utf-8") \
                        as f:
                    fence = False
                    for ln in f:
                        if ln.startswith("```"):
                            fence = not fence
                        m = None if fence else re.match(r"#+\s+(.*)", ln)
                        if not m:
                            continue
                        h = m.group(1).strip()
                        num = re.match(r"(\d+(?:\.\d+)*)\.?\s+(.*)", h)
                        if num:
                            nums.add(num.group(1))
                            names.add(norm(num.group(2)))
                        names.add(norm(h))
            except OSError:
                pass
            self.headings[path] = (names, nums)
        return self.headings[path]

    def read_keys(self):
        keys = set()
        path = os.path.join(self.root, "docs", "REFERENCES.md")
        try:
            with open(path, encoding="utf-8") as f:
                for ln in f:
                    m = re.match(r"\s*(?:[-*]\s*)?\*{0,2}\[([^\]\s]+)\]", ln)
                    if m:
                        keys.add(m.group(1))
                    m = re.match(r"#+\s.*\[([^\]\s]+)\]\s*$", ln)
                    if m:
                        keys.add(m.group(1))
        except OSError:
            pass
        return keys


def norm(s):
    return " ".join(s.replace("`", "").replace("*", "").lower().split())


def scan_files(root):
    for top in SCAN:
        p = os.path.join(root, top)
        if os.path.isfile(p):
            yield top
            continue
        for d, subdirs, files in os.walk(p):
            rel = os.path.relpath(d, root)
            subdirs[:] = sorted(s for s in subdirs
                                if os.path.join(rel, s) not in SKIP_DIRS)
            for f in sorted(files):
                if os.path.splitext(f)[1] in TEXT_EXT or f in TEXT_NAMES:
                    yield os.path.join(rel, f).replace(os.sep, "/")


def md_texts(src):
    """Markdown: the prose (code spans kept, fenced blocks too: paths and
    file names are checked in both) and the prose without code (for
    [Key] references)."""
    whole, prose, fence = Text(), Text(), False
    for k, ln in enumerate(src.split("\n"), 1):
        whole.add(ln, k)
        if ln.lstrip().startswith("```"):
            fence = not fence
            continue
        if not fence:
            prose.add(re.sub(r"`[^`]*`", "", ln), k)
    return whole, prose


def hash_texts(src):
    """Python, shell, CMake: the whole text (comments and strings)."""
    t = Text()
    for k, ln in enumerate(src.split("\n"), 1):
        t.add(ln, k)
    return t


class Checker:
    def __init__(self, repo):
        self.repo, self.bad, self.count = repo, [], 0

    def report(self, path, line, what):
        self.bad.append(f"{path}:{line}: {what}")

    def forbidden(self, path, t):
        s = t.text()
        in_docs = path.startswith("docs/")
        for rx, what in FORBIDDEN:
            for m in rx.finditer(s):
                if in_docs and m.group(0) == "DESIGN.md" and \
                        s[max(0, m.start() - 2):m.start()] == "](":
                    continue  # a link from docs/ to docs/DESIGN.md
                self.report(path, t.line(m.start()), f"'{m.group(0)}' {what}")

    def section(self, path, t, s, end, target):
        """Check the section cited right after a Markdown file name."""
        m = SECTION_AFTER.match(s, end)
        if not m or not target:
            return
        names, nums = self.repo.md_headings(target)
        line = t.line(end)
        if m.group("name") is not None:
            self.count += 1
            if norm(m.group("name")) not in names:
                self.report(path, line, f"{target} has no section "
                            f"\"{m.group('name')}\"")
            return
        cited = [m.group("num")]
        pos = m.end()
        while True:
            more = MORE_NUMS.match(s, pos)
            if not more:
                break
            cited.append(more.group("num"))
            pos = more.end()
        for num in cited:
            self.count += 1
            if num not in nums:
                self.report(path, line, f"{target} has no section {num}")

    def paths(self, path, t, md_only=False):
        s = t.text()
        for m in PATH_RE.finditer(s):
            p = m.group(1).rstrip(".,;:-")
            if s[m.end():m.end() + 1] in ("<", "{", "%"):
                continue  # a pattern such as src/part/part_<name>.c
            if md_only and not p.endswith(".md"):
                continue  # a string names files a test makes or misses
            if re.match(r"\s*@\s*[0-9a-f]{6,}", s[m.end():]):
                continue  # another project's path at a commit
            self.count += 1
            if not self.repo.exists(p):
                self.report(path, t.line(m.start()),
                            f"'{p}' is not in the repository")
            elif p.endswith(".md"):
                self.section(path, t, s, m.start(1) + len(p), p)

    def bare(self, path, t):
        s = t.text()
        for m in BARE_RE.finditer(s):
            name = m.group(1)
            if name in EXTERNAL:
                continue
            self.count += 1
            if "*" in name:
                ok = any(fnmatch.fnmatch(b, name) for b in self.repo.base)
            else:
                ok = name in self.repo.base
            if not ok:
                self.report(path, t.line(m.start()),
                            f"'{name}' names no file of the repository")
        for m in MD_NAME_RE.finditer(s):
            name = m.group(1)
            if m.start() > 0 and s[m.start() - 1] == "/":
                continue
            self.count += 1
            hits = self.repo.base.get(name, [])
            if not hits:
                self.report(path, t.line(m.start()),
                            f"'{name}' names no file of the repository")
                continue
            here = os.path.join(os.path.dirname(path), name).replace(
                os.sep, "/")
            if here in hits:
                target = here  # beside the citing file
            elif name in hits:
                target = name  # at the repository's root
            else:
                target = hits[0] if len(hits) == 1 else None
            if target is None:
                if SECTION_AFTER.match(s, m.end()):
                    self.report(path, t.line(m.start()),
                                f"'{name}' is ambiguous ({', '.join(hits)}):"
                                " give its path")
                continue
            self.section(path, t, s, m.end(), target)

    def keys(self, path, t):
        for m in KEY_RE.finditer(t.text()):
            key = m.group(1)
            if key.isupper() and key not in self.repo.keys:
                continue  # [RUNS], [WORLD]: a placeholder, not a key
            self.count += 1
            if key not in self.repo.keys:
                self.report(path, t.line(m.start()),
                            f"[{key}] is not a key of docs/REFERENCES.md")

    def links(self, path, t):
        s = t.text()
        for m in LINK_RE.finditer(s):
            target = m.group(1)
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            target = target.split("#", 1)[0]
            full = os.path.normpath(os.path.join(os.path.dirname(path),
                                                 target)).replace(os.sep, "/")
            self.count += 1
            if not self.repo.exists(full):
                self.report(path, t.line(m.start()),
                            f"link to '{target}', which is not in the "
                            "repository")

    def check(self, path):
        with open(os.path.join(self.repo.root, path), encoding="utf-8",
                  errors="replace") as f:
            src = f.read()
        ext = os.path.splitext(path)[1]
        if ext in (".c", ".h"):
            comments, strings = Text(), Text()
            for kind, s, line in c_pieces(src):
                (comments if kind == "comment" else strings).add(s, line)
            for t in (comments, strings):
                self.forbidden(path, t)
            self.paths(path, comments)
            self.paths(path, strings, md_only=True)
            self.bare(path, comments)
            self.keys(path, comments)
        elif ext == ".md":
            whole, prose = md_texts(src)
            self.forbidden(path, whole)
            self.paths(path, whole)
            self.bare(path, whole)
            self.links(path, whole)
            self.keys(path, prose)
        else:
            t = hash_texts(src)
            self.forbidden(path, t)
            self.paths(path, t)


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[1] if len(argv) == 2 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..")
    root = os.path.abspath(root)
    if not os.path.isdir(os.path.join(root, "src")):
        print(f"check_citations: {root} is not the repository's root",
              file=sys.stderr)
        return 2
    repo = Repo(root)
    ck = Checker(repo)
    me = os.path.relpath(os.path.abspath(__file__), root).replace(os.sep, "/")
    nfile = 0
    for path in scan_files(root):
        if path == me:
            continue  # its own patterns are not citations
        nfile += 1
        ck.check(path)
    for b in ck.bad:
        print(b)
    if ck.bad:
        print(f"check_citations: {len(ck.bad)} unresolved citations "
              f"in {nfile} files")
        return 1
    print(f"check_citations: {ck.count} citations in {nfile} files resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
