#!/usr/bin/env python3
"""tools/docs-man.py - write the kvplan(1) man page (troff, man(7) macros) to
stdout from the docs: docs/man/kvplan.head (NAME, SYNOPSIS, DESCRIPTION, by
hand), then one COMMANDS subsection per page of tools/docs-commands.list (its
first paragraph and its "## Usage" block, which tests/docs/help-sync.sh holds
to `kvplan ... --help`), then docs/man/kvplan.tail (FILES, ENVIRONMENT, EXIT
STATUS, SEE ALSO, by hand).

    python3 tools/docs-man.py > docs/kvplan.1

Python 3 standard library only; the output depends on the docs alone."""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def esc(text):
    """Escape plain text for troff: backslashes, and non-ASCII as \\[uXXXX]."""
    text = text.replace("\\", "\\e")
    return "".join(c if ord(c) < 128 else "\\[u%04X]" % ord(c) for c in text)


def line_safe(line):
    """A line troff will not read as a request."""
    return "\\&" + line if line.startswith((".", "'")) else line


def code(text):
    """Literal text, such as an option: dashes as \\- so they copy as typed."""
    return esc(text).replace("-", "\\-")


def inline(md):
    """Markdown inline markup to troff: `code` and **x** bold, *x* italic,
    [t](u) -> t."""
    out, pos = [], 0
    for m in re.finditer(r"`([^`]+)`|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*|\[([^\]]+)\]\([^)]*\)", md):
        out.append(esc(m.string[pos:m.start()]))
        if m.group(1) is not None:
            out.append("\\fB" + code(m.group(1)) + "\\fR")
        elif m.group(2) is not None:
            out.append("\\fB" + esc(m.group(2)) + "\\fR")
        elif m.group(3) is not None:
            out.append("\\fI" + esc(m.group(3)) + "\\fR")
        else:
            out.append(esc(m.group(4)))
        pos = m.end()
    out.append(esc(md[pos:]))
    return "".join(out)


def page(name):
    path = os.path.join(ROOT, "docs", "commands", name + ".md")
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if not lines or not lines[0].startswith("# "):
        sys.exit("docs-man: %s: the first line is not a '# ' title" % path)
    title = lines[0][2:].strip().strip("`")
    i = 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    para = []
    while i < len(lines) and lines[i].strip() and not lines[i].startswith(("#", "```", "|")):
        para.append(lines[i].strip())
        i += 1
    try:
        u = lines.index("## Usage")
        start = lines.index("```text", u) + 1
        end = lines.index("```", start)
    except ValueError:
        sys.exit("docs-man: %s: no ```text block under '## Usage'" % path)
    return title, " ".join(para), lines[start:end]


def main():
    out = []
    with open(os.path.join(ROOT, "docs", "man", "kvplan.head"), encoding="utf-8") as f:
        out.append(f.read().rstrip("\n"))
    out.append(".SH COMMANDS")
    out.append("Each command's options, as \\fBkvplan\\fR \\fICOMMAND\\fR \\fB\\-\\-help\\fR prints them.")
    out.append("The pages under \\fIdocs/commands/\\fR of the source tree say more, with examples and")
    out.append("the JSON fields.")
    with open(os.path.join(ROOT, "tools", "docs-commands.list"), encoding="utf-8") as f:
        names = [l.split()[0] for l in f if l.strip() and not l.startswith("#")]
    for name in names:
        title, para, usage = page(name)
        out.append('.SS "%s"' % code(title))
        if para:
            out.append(line_safe(inline(para)))
        out.append(".PP")
        out.append(".nf")
        out.append(".in +2n")
        for l in usage:
            out.append(line_safe(code(l)) if l else "")
        out.append(".in")
        out.append(".fi")
    with open(os.path.join(ROOT, "docs", "man", "kvplan.tail"), encoding="utf-8") as f:
        out.append(f.read().rstrip("\n"))
    sys.stdout.write("\n".join(out) + "\n")


main()
