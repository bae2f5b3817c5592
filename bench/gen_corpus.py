#!/usr/bin/env python3
"""Generates the search benchmark corpus: a deterministic, source-like tree.

Usage: gen_corpus.py OUT_DIR [--files N] [--mixed]

Same seed, same bytes: the tree depends only on this file, N and --mixed. What is in it:
- N tracked text files (default 20,000) in .rs/.py/.ts/.go/.md/.json/.toml/.yml,
  3-5 directories deep, sizes log-normal (median ~2.5 KB, a few up to ~400 KB). Each
  .rs/.py/.ts/.go file is code of its own language, made of whole definitions (functions,
  methods in classes or impls, structs, interfaces) that its grammar parses without
  error, as a real repository's files are. With --mixed (the corpus of the measurements
  before 2026-12-03) every file is lines drawn from one pool of all the languages and
  prose: fine for searching, but a parser spends most of its time recovering from
  errors on it (tree-sitter parses it about 6x slower than real code);
- hidden files (.github/, .config/) that both tools search (rg --hidden);
- git-ignored trees (target/, node_modules/, a nested .gitignore's generated/, *.log)
  that both tools must skip, seeded with the query needles so a tool that reads them
  reports more matches;
- binary files (NUL in the first bytes, needles after it) that both tools skip;
- the rare needle `flux_capacitor_overdrive` in exactly a dozen tracked text files, and
  CRLF, emoji and CJK text in some files.
It contains no secret-named files (.env, *.pem, *.key): copilot-ls refuses them and rg
would search them, so the two would not be searching the same files.
"""

import os
import random
import sys

SEED = 20240611
RARE = "flux_capacitor_overdrive"
RARE_FILES = 12

WORDS = (
    "config request response handler buffer stream token session document index cache "
    "error result value state context reader writer parser lexer symbol range position "
    "encoding provider client server message payload header offset length count limit "
    "retry timeout channel worker queue task future spawn lock mutex atomic vector map "
    "entry key node tree walk path root file line column span chunk batch metric trace "
    "event signal shutdown cancel notify update apply commit revert merge diff patch"
).split()
UNICODE_BITS = ["😀", "✅", "🚀", "漢字", "café", "naïve", "Grüße", "日本語", "→", "λ"]
EXTS = [".rs"] * 5 + [".py"] * 3 + [".ts"] * 3 + [".go"] * 2 + [".md", ".json", ".toml", ".yml"]


def ident(rng):
    n = rng.randint(1, 3)
    parts = rng.sample(WORDS, n)
    style = rng.random()
    if style < 0.6:
        return "_".join(parts)
    if style < 0.9:
        return parts[0] + "".join(p.capitalize() for p in parts[1:])
    return "".join(p.capitalize() for p in parts)


def make_line_pool(rng, size):
    """Lines of plausible code and prose; files are sampled from this pool (fast)."""
    templates = [
        "    let {a} = {b}.{c}({d})?;",
        "    if {a}.is_empty() {{ return Err(Error::{B}); }}",
        "fn {a}(&self, {b}: &{B}) -> Result<{C}> {{",
        "    // {w1} the {w2} before the {w3} is {w4}ed",
        "    {a}.insert({b}, {c}.clone());",
        "    for {a} in {b}.iter() {{",
        "}}",
        "",
        "def {a}(self, {b}, {c}=None):",
        "        return self.{a}[{b}]",
        "        # {w1} {w2}: {w3} then {w4}",
        "export function {a}({b}: {B}): {C} {{",
        "  const {a} = await {b}.{c}({d});",
        "func ({a} *{B}) {C}(ctx context.Context) error {{",
        '    "{a}": "{w1} {w2}",',
        "{a} = \"{w1}-{w2}\"",
        "  - name: {w1} {w2}",
        "The {w1} {w2} keeps the {w3} until the {w4} is done.",
        "    assert_eq!({a}.len(), {n});",
        "    log::debug!(\"{w1} {{}} {w2}\", {a});",
    ]
    pool = []
    for _ in range(size):
        t = rng.choice(templates)
        line = t.format(
            a=ident(rng), b=ident(rng), c=ident(rng), d=ident(rng),
            B=ident(rng).title().replace("_", ""), C=ident(rng).title().replace("_", ""),
            w1=rng.choice(WORDS), w2=rng.choice(WORDS), w3=rng.choice(WORDS),
            w4=rng.choice(WORDS), n=rng.randint(0, 9999),
        )
        if rng.random() < 0.03:
            line += " // " + rng.choice(UNICODE_BITS)
        pool.append(line)
    return pool


# Code of one language, whole definitions at a time. `{a}`-style slots are filled as in
# the line pool; a body is a few statements drawn from its language's list.
KEYWORDS = {"map", "range", "type", "func", "go", "select", "default", "case", "chan"}


def code_ident(rng):
    name = ident(rng)
    return name + "_v" if name in KEYWORDS else name


def type_name(rng):
    return ident(rng).title().replace("_", "")


def fill(rng, template):
    return template.format(
        a=code_ident(rng), b=code_ident(rng), c=code_ident(rng), d=code_ident(rng),
        B=type_name(rng), C=type_name(rng), D=type_name(rng),
        w1=rng.choice(WORDS), w2=rng.choice(WORDS), w3=rng.choice(WORDS),
        w4=rng.choice(WORDS), n=rng.randint(0, 9999),
    )


STATEMENTS = {
    ".rs": [
        "let {a} = {b}.{c}({d})?;",
        "if {a}.is_empty() {{\n    return Err(Error::{B});\n}}",
        "for {a} in {b}.iter() {{\n    {c}.insert({a}, {d}.clone());\n}}",
        "// {w1} the {w2} before the {w3} is {w4}ed",
        "assert_eq!({a}.len(), {n});",
        "log::debug!(\"{w1} {{}} {w2}\", {a});",
        "let {a}: Vec<{B}> = {b}.into_iter().map({C}::from).collect();",
    ],
    ".py": [
        "{a} = {b}.{c}({d})",
        "if {a} is None:\n    return {b}",
        "for {a} in {b}:\n    {c}.append({a})",
        "# {w1} {w2}: {w3} then {w4}",
        "self.{a}[{b}] = {c}",
        "{a} = {{\"{w1}\": {b}, \"{w2}\": {n}}}",
    ],
    ".ts": [
        "const {a} = await {b}.{c}({d});",
        "if (!{a}) {{\n  return {b};\n}}",
        "for (const {a} of {b}) {{\n  {c}.push({a});\n}}",
        "// {w1} the {w2} before the {w3} is {w4}ed",
        "this.{a}.set({b}, {c});",
        "const {a}: {B} = {{ {b}: {n}, {c}: \"{w1}\" }};",
    ],
    ".go": [
        "{a} := {b}.{C}({d})",
        "if err := {a}.{C}(ctx); err != nil {{\n\treturn err\n}}",
        "for _, {a} := range {b} {{\n\t{c} = append({c}, {a})\n}}",
        "// {w1} the {w2} before the {w3} is {w4}ed",
        "{a}.{C} = {n}",
    ],
}
COMMENT = {".rs": "//", ".py": "#", ".ts": "//", ".go": "//"}
INDENT = {".rs": "    ", ".py": "    ", ".ts": "  ", ".go": "\t"}


def body(rng, ext, depth):
    pad = INDENT[ext] * depth
    lines = []
    for _ in range(rng.randint(1, 8)):
        statement = fill(rng, rng.choice(STATEMENTS[ext]))
        if rng.random() < 0.03:
            statement += f" {COMMENT[ext]} {rng.choice(UNICODE_BITS)}"
        lines.extend(pad + line for line in statement.split("\n"))
    return lines


def function(rng, ext, depth):
    pad = INDENT[ext] * depth
    if ext == ".rs":
        head = [fill(rng, "/// {w1} the {w2} before the {w3}."),
                fill(rng, "pub fn {a}(&self, {b}: &{B}) -> Result<{C}> {{")]
        tail = [INDENT[ext] + "Ok(Default::default())", "}"]
    elif ext == ".py":
        head = [fill(rng, "def {a}(self, {b}, {c}=None):"),
                INDENT[ext] + fill(rng, '"""{w1} the {w2} before the {w3}."""')]
        tail = [INDENT[ext] + "return None"]
    elif ext == ".ts":
        head = [fill(rng, "/** {w1} the {w2} before the {w3}. */"),
                fill(rng, "async {a}({b}: {B}): Promise<{C} | undefined> {{" if depth
                     else "export async function {a}({b}: {B}): Promise<{C} | undefined> {{")]
        tail = [INDENT[ext] + "return undefined;", "}"]
    else:
        head = [fill(rng, "// {C} {w1}s the {w2} before the {w3}."),
                fill(rng, "func ({a} *{B}) {C}(ctx context.Context) error {{")]
        tail = [INDENT[ext] + "return nil", "}"]
    lines = head + body(rng, ext, 1) + tail
    return [pad + line if line else line for line in lines]


def container(rng, ext):
    methods = [line for _ in range(rng.randint(1, 4)) for line in [""] + function(rng, ext, 1)]
    if ext == ".rs":
        fields = [fill(rng, "    pub {a}: {B},") for _ in range(rng.randint(1, 4))]
        name = type_name(rng)
        return [f"pub struct {name} {{"] + fields + ["}", "", f"impl {name} {{"] + methods[1:] + ["}"]
    if ext == ".py":
        return [fill(rng, "class {B}:"), INDENT[ext] + fill(rng, '"""{w1} {w2}s."""')] + methods
    if ext == ".ts":
        fields = [fill(rng, "  private {a}: Map<string, {B}> = new Map();")]
        return [fill(rng, "export class {B} {{")] + fields + methods + ["}"]
    fields = [fill(rng, "\t{C} {D}") for _ in range(rng.randint(1, 4))]
    return [fill(rng, "type {B} struct {{")] + fields + ["}"]


def unit(rng, ext):
    if rng.random() < 0.3:
        return container(rng, ext)
    if ext == ".ts" and rng.random() < 0.2:
        return [fill(rng, "export interface {B} {{"), fill(rng, "  {a}: {C};"), "}"]
    return function(rng, ext, 0)


PRELUDE = {
    ".rs": ["use std::collections::HashMap;", "", "use crate::error::{{Error, Result}};"],
    ".py": ["import logging", "from typing import Optional"],
    ".ts": ['import {{ Store }} from "./store";'],
    ".go": ["package {w1}", "", "import (", '\t"context"', ")"],
}


def code_text(rng, units, ext, size, crlf):
    lines = [fill(rng, line) for line in PRELUDE[ext]]
    total = sum(len(line) + 1 for line in lines)
    while total < size:
        chosen = rng.choice(units)
        lines.append("")
        lines.extend(chosen)
        total += sum(len(line) + 1 for line in chosen) + 1
    sep = "\r\n" if crlf else "\n"
    return sep.join(lines) + sep


RARE_UNIT = {
    ".rs": ["fn rare_needle() {", f"    let {RARE} = Overdrive::new(); // rare needle", f"    drop({RARE});", "}"],
    ".py": ["def rare_needle():", f"    {RARE} = Overdrive()  # rare needle", f"    return {RARE}"],
    ".ts": ["export function rareNeedle() {", f"  const {RARE} = new Overdrive(); // rare needle",
            f"  return {RARE};", "}"],
    ".go": ["func rareNeedle() *Overdrive {", f"\t{RARE} := NewOverdrive() // rare needle",
            f"\treturn {RARE}", "}"],
}


def file_text(rng, pool, size, crlf):
    lines = []
    total = 0
    while total < size:
        line = rng.choice(pool)
        lines.append(line)
        total += len(line) + 1
    sep = "\r\n" if crlf else "\n"
    return sep.join(lines) + sep


def file_size(rng):
    # Log-normal around 2.5 KB, clamped; a handful of big generated-looking files.
    if rng.random() < 0.002:
        return rng.randint(150_000, 400_000)
    return int(min(max(rng.lognormvariate(7.8, 1.0), 60), 120_000))


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    kwargs = {} if isinstance(data, bytes) else {"encoding": "utf-8", "newline": ""}
    with open(path, mode, **kwargs) as f:
        f.write(data)


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    out = args[0]
    n_files = int(args[args.index("--files") + 1]) if "--files" in args else 20_000
    mixed = "--mixed" in args
    rng = random.Random(SEED)
    pool = make_line_pool(rng, 40_000)
    # Drawn from their own generator, so the rest of the tree (paths, sizes, the ignored
    # and binary files) is the same with and without --mixed.
    code_rng = random.Random(SEED + 1)
    units = {ext: [unit(code_rng, ext) for _ in range(3_000)] for ext in STATEMENTS}

    # Directory tree: 12 top-level packages, each with nested modules.
    dirs = []
    for p in range(12):
        top = f"{rng.choice(['crates', 'packages', 'services', 'libs'])}/{ident(rng)}_{p}"
        for m in range(rng.randint(6, 14)):
            mid = f"{top}/{rng.choice(['src', 'lib', 'internal', 'pkg'])}/{ident(rng)}"
            dirs.append(mid)
            for _ in range(rng.randint(0, 3)):
                dirs.append(f"{mid}/{ident(rng)}")

    rare_at = set(rng.sample(range(n_files), RARE_FILES))
    hidden = 0
    for i in range(n_files):
        if i % 500 == 0:
            # Hidden files: both tools search them.
            path = f".github/workflows/job_{i}.yml" if hidden % 2 == 0 else f".config/tool_{i}.toml"
            hidden += 1
        else:
            d = rng.choice(dirs)
            path = f"{d}/{ident(rng)}_{i}{rng.choice(EXTS)}"
        text = file_text(rng, pool, file_size(rng), crlf=rng.random() < 0.05)
        if i in rare_at:
            lines = text.split("\n")
            at = rng.randrange(len(lines))
            lines.insert(at, f"    let {RARE} = Overdrive::new(); // rare needle")
            text = "\n".join(lines)
        ext = os.path.splitext(path)[1]
        if not mixed and ext in STATEMENTS:
            # The size and line ending the mixed corpus gives this file, in its language
            # (`rng` is not used here, so every later file is the same as with --mixed).
            text = code_text(code_rng, units[ext], ext, len(text), text.endswith("\r\n"))
            if i in rare_at:
                lines = text.split("\n")
                half = len(lines) // 2
                at = next((k for k in range(half, len(lines)) if not lines[k].strip()), len(lines))
                lines[at:at] = [""] + RARE_UNIT[ext]
                text = "\n".join(lines)
        write(os.path.join(out, path), text)

    # What .gitignore hides. Both tools must skip all of it.
    write(os.path.join(out, ".gitignore"), "target/\nnode_modules/\n*.log\n")
    for i in range(1500):
        text = file_text(rng, pool, file_size(rng), crlf=False)
        write(os.path.join(out, f"target/debug/build/{ident(rng)}_{i % 40}/out_{i}.rs"),
              f"// {RARE}\n" + text)
    for i in range(800):
        write(os.path.join(out, f"node_modules/{ident(rng)}/lib/index_{i}.ts"),
              f"// {RARE}\n" + file_text(rng, pool, file_size(rng), crlf=False))
    for i in range(50):
        write(os.path.join(out, f"logs/run_{i}.log"), f"{RARE}\n" * 20)
    nested = dirs[0].split("/")[0] + "/" + dirs[0].split("/")[1]
    write(os.path.join(out, nested, ".gitignore"), "generated/\n")
    for i in range(200):
        write(os.path.join(out, nested, f"generated/gen_{i}.rs"),
              f"// {RARE}\n" + file_text(rng, pool, 4000, crlf=False))

    # Binary files: a NUL up front, then text with needles; both tools skip them.
    for i in range(300):
        body = bytes(rng.getrandbits(8) for _ in range(rng.randint(512, 8192)))
        data = b"\x89PNG\x00\x00" + body + f"\n{RARE} error config\n".encode()
        write(os.path.join(out, f"assets/img/{ident(rng)}_{i}.png"), data)


if __name__ == "__main__":
    main()
