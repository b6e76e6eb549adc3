#!/usr/bin/env python3
"""Fails when a C++ function in the given files or folders is longer than the
limit (TigerBeetle's rule: 70 lines, from the first line of its signature to
its closing brace). Lambdas and local classes count toward the function that
holds them. Usage: function_length.py [--max N] PATH..."""
import argparse
import os
import re
import sys

DECLARATION_BLOCKS = re.compile(r"\b(namespace|class|struct|union|enum|extern)\b[^;{}()]*$")


def strip(text):
    """Comments, string and character literals blanked out, newlines kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "R" and i + 1 < n and text[i + 1] == '"' and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_paren = text.find("(", i + 2)
            delimiter = text[i + 2:open_paren]
            j = text.find(")" + delimiter + '"', open_paren)
            j = n if j < 0 else j + len(delimiter) + 2
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def declaration_level(stack):
    return all(block is True for block in stack)


def functions(text):
    """(name line, first line, last line) of each function defined at namespace or class level."""
    code = strip(text)
    # True for a declaration-level block (namespace, class, ...), a tuple for
    # a function body, False for any other block.
    stack = []
    start = 0  # where the current declaration began
    found = []
    line = 1
    lines_at = []
    for ch in code:
        lines_at.append(line)
        if ch == "\n":
            line += 1
    for i, ch in enumerate(code):
        if ch == ";":
            if declaration_level(stack):
                start = i + 1
        elif ch == "{":
            head = code[start:i]
            at_declaration_level = declaration_level(stack)
            if at_declaration_level and DECLARATION_BLOCKS.search(head):
                stack.append(True)
                start = i + 1
            elif at_declaration_level and re.search(r"[)\]]\s*[\w\s&:<>,\-]*$|\)\s*:\s*.*[)}]\s*$", head.strip(), re.S) \
                    and not re.search(r"=\s*$", head.strip()):
                stack.append(("function", start, i))
            else:
                stack.append(False)
        elif ch == "}":
            if not stack:
                continue
            top = stack.pop()
            if isinstance(top, tuple):
                _, begin, _ = top
                first = begin
                while True:  # past blank space and access specifiers ("public:")
                    while first < i and code[first].isspace():
                        first += 1
                    label = re.match(r"(public|private|protected)\s*:(?!:)", code[first:i])
                    if not label:
                        break
                    first += label.end()
                found.append((code[first:top[2]].strip().split("(")[0].split()[-1:] or ["?"],
                              lines_at[first], lines_at[i]))
            if declaration_level(stack):
                start = i + 1
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--max", type=int, default=70)
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    files = []
    for path in args.paths:
        if os.path.isdir(path):
            for root, _, names in os.walk(path):
                files += [os.path.join(root, n) for n in sorted(names) if n.endswith((".cc", ".h"))]
        else:
            files.append(path)
    too_long = []
    for path in sorted(files):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for name, first, last in functions(text):
            length = last - first + 1
            if length > args.max:
                too_long.append(f"{path}:{first}: {name[0]} is {length} lines; the limit is {args.max}")
    for line in too_long:
        print(line)
    if too_long:
        print(f"{len(too_long)} function(s) over {args.max} lines: split them")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
