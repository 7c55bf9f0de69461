#!/usr/bin/env python3
"""Generates the benchmark repositories' working trees (deterministic: a fixed seed).

    bench/genrepo.py DIR --files N [--ts-modules M] [--sarif FILE --sarif-results R]

Writes N files under DIR (which must be empty or absent): a realistic tree of plain files (docs,
configuration, assets, data, services in Python and Go, web styles), plus, with --ts-modules, a
TypeScript project of M modules under web/src/ with a tsconfig.json and package.json at DIR's root,
so that an indexer run from DIR names documents by repository-relative path. The plain files fill
the rest up to N.

The TypeScript project has no import cycles: module i imports only from modules j < i (the
indexer overflows its stack on large cyclic projects). Imports favour low-numbered modules, so a
few modules are referenced from hundreds of others (centrality worth ranking), and every imported
symbol is used several times, so the SCIP index is mostly cross-document references.

With --sarif, writes a SARIF 2.1.0 log of R results spread over the TypeScript modules (about a
third errors, the rest warnings), half with absolute file:// URIs and half with URIs relative to
the uriBaseId %SRCROOT% (DIR). It is synthetic, but valid SARIF: one run, a tool driver with its
rules, each result with ruleId, ruleIndex, level, message and a physicalLocation with a region
inside the file.
"""

import argparse
import json
import os
import random
import sys
from pathlib import Path
from urllib.parse import quote

WORDS = (
    "account ledger invoice payment order cart price tax refund quote stock item shipment route "
    "carrier warehouse supplier customer session token audit report metric alert policy quota "
    "schedule batch export import parser render layout theme widget cache queue worker event "
    "stream signal channel notice profile setting locale currency balance transfer journal entry"
).split()
AREAS = (
    "core billing catalog checkout inventory shipping identity reporting search notify "
    "pricing ledger orders payments admin analytics support content media settings"
).split()


def word(rng):
    return rng.choice(WORDS)


def sentence(rng, n):
    return " ".join(word(rng) for _ in range(n)).capitalize() + "."


def ts_module_paths(m):
    """web/src/<area>/<word><i>.ts, 20 areas, spread evenly."""
    rng = random.Random(7)
    paths = []
    for i in range(m):
        area = AREAS[i % len(AREAS)]
        paths.append(f"web/src/{area}/{rng.choice(WORDS)}{i:04d}.ts")
    return paths


def pick_deps(rng, i, k):
    """k distinct modules j < i, biased towards low j (a few modules become very central)."""
    if i == 0:
        return []
    deps = set()
    while len(deps) < min(k, i):
        j = int(i * rng.random() ** 2.2)
        deps.add(min(j, i - 1))
    return sorted(deps)


def ts_module(i, paths, rng):
    here = Path(paths[i]).parent
    deps = pick_deps(rng, i, 3)
    out = []
    for j in deps:
        rel = os.path.relpath(paths[j][: -len(".ts")], here)
        if not rel.startswith("."):
            rel = "./" + rel
        out.append(f'import {{ Entity{j}, Service{j}, make{j}, LIMIT_{j} }} from "{rel}";')
    out.append("")
    out.append(f"/** {sentence(rng, 8)} */")
    out.append(f"export const LIMIT_{i} = {rng.randint(2, 500)};")
    out.append("")
    out.append(f"/** Kinds of {word(rng)} handled by module {i}. */")
    out.append(f"export type Kind{i} = \"default\" | \"{word(rng)}\" | \"{word(rng)}-{i}\";")
    out.append("")
    out.append(f"/** {sentence(rng, 10)} */")
    out.append(f"export interface Entity{i} {{")
    out.append("  id: string;")
    out.append(f"  kind: Kind{i};")
    out.append("  amount: number;")
    out.append("  tags: string[];")
    for j in deps[:3]:
        out.append(f"  ref{j}?: Entity{j};")
    out.append("}")
    out.append("")
    out.append(f"/** Builds an entity of module {i}. {sentence(rng, 6)} */")
    out.append(f"export function make{i}(id: string, amount: number, kind: Kind{i}): Entity{i} {{")
    out.append(f"  const entity: Entity{i} = {{ id, kind, amount: Math.min(amount, LIMIT_{i}), tags: [] }};")
    for j in deps[:3]:
        out.append(f"  entity.ref{j} = make{j}(id + \"/{j}\", amount % LIMIT_{j}, \"default\");")
    out.append("  return entity;")
    out.append("}")
    out.append("")
    out.append(f"/** {sentence(rng, 12)} */")
    out.append(f"export class Service{i} {{")
    out.append(f"  private readonly items = new Map<string, Entity{i}>();")
    params = ", ".join(f"private readonly dep{j}: Service{j}" for j in deps)
    out.append(f"  constructor({params}) {{}}")
    out.append("")
    out.append(f"  /** Adds an entity. */")
    out.append(f"  add(entity: Entity{i}): Entity{i} {{")
    out.append("    this.items.set(entity.id, entity);")
    out.append("    return entity;")
    out.append("  }")
    out.append("")
    out.append(f"  /** Looks an entity up by id. */")
    out.append(f"  get(id: string): Entity{i} | undefined {{")
    out.append("    return this.items.get(id);")
    out.append("  }")
    out.append("")
    out.append(f"  /** The sum of every amount, here and in the services this one depends on. */")
    out.append("  total(): number {")
    out.append("    let sum = 0;")
    out.append("    for (const entity of this.items.values()) sum += entity.amount;")
    for j in deps:
        out.append(f"    sum += this.dep{j}.total();")
    out.append("    return sum;")
    out.append("  }")
    out.append("")
    for n in range(1):
        verb = word(rng)
        out.append(f"  /** {sentence(rng, 7)} */")
        out.append(f"  {verb}{n}(id: string, amount: number): Entity{i} {{")
        out.append(f"    const entity = this.add(make{i}(id, amount, \"default\"));")
        for j in deps:
            if rng.random() < 0.6:
                out.append(f"    const e{j}: Entity{j} = this.dep{j}.add(make{j}(id, LIMIT_{j}, \"default\"));")
                out.append(f"    entity.tags.push(e{j}.id, String(this.dep{j}.get(e{j}.id)?.amount ?? LIMIT_{j}));")
        out.append("    return entity;")
        out.append("  }")
        out.append("")
    out.append("}")
    out.append("")
    return "\n".join(out)


def plain_file(rng, path):
    ext = path.rsplit(".", 1)[-1]
    if ext == "md":
        return f"# {sentence(rng, 4)}\n\n" + "\n\n".join(sentence(rng, rng.randint(8, 30)) for _ in range(rng.randint(1, 6))) + "\n"
    if ext == "json":
        return json.dumps({word(rng): {word(rng): rng.randint(0, 9999) for _ in range(rng.randint(1, 8))} for _ in range(rng.randint(1, 5))}, indent=2) + "\n"
    if ext == "yaml":
        return "".join(f"{word(rng)}_{k}: {word(rng)}\n" for k in range(rng.randint(3, 20)))
    if ext == "py":
        name = word(rng)
        return (f'"""{sentence(rng, 8)}"""\n\n\ndef {name}(value):\n    """{sentence(rng, 6)}"""\n'
                f"    return value * {rng.randint(1, 99)}\n\n\nclass {name.capitalize()}:\n    limit = {rng.randint(1, 999)}\n")
    if ext == "go":
        name = word(rng)
        return (f"package {Path(path).parent.name.replace('-', '')}\n\n// {name.capitalize()} {sentence(rng, 6)}\n"
                f"func {name.capitalize()}(v int) int {{\n\treturn v * {rng.randint(1, 99)}\n}}\n")
    if ext == "css":
        return "".join(f".{word(rng)}-{k} {{ margin: {rng.randint(0, 32)}px; color: #{rng.randint(0, 0xFFFFFF):06x}; }}\n" for k in range(rng.randint(2, 15)))
    if ext == "svg":
        return f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="M{rng.randint(0, 24)} {rng.randint(0, 24)}h{rng.randint(1, 9)}v{rng.randint(1, 9)}z"/></svg>\n'
    return "\n".join(sentence(rng, rng.randint(4, 14)) for _ in range(rng.randint(1, 12))) + "\n"


def plain_paths(n, rng):
    """n distinct paths in a tree of ~20-60 files per directory, 2-5 levels deep."""
    roots = [
        ("docs", ["md"] * 5 + ["svg"]),
        ("config", ["yaml", "json"]),
        ("assets/icons", ["svg"]),
        ("data/fixtures", ["json", "txt"]),
        ("services", ["py"] * 3 + ["go"] * 2 + ["yaml", "md"]),
        ("web/styles", ["css"]),
        ("tools", ["py", "md", "txt"]),
    ]
    paths = []
    while len(paths) < n:
        root, exts = rng.choice(roots)
        depth = rng.randint(1, 3)
        parts = [root] + [f"{word(rng)}-{rng.randint(0, 6)}" for _ in range(depth)]
        directory = "/".join(parts)
        for _ in range(rng.randint(20, 60)):
            if len(paths) >= n:
                break
            paths.append(f"{directory}/{word(rng)}_{len(paths):05d}.{rng.choice(exts)}")
    return paths


def write_sarif(root, ts_paths, out, results, rng):
    rules = [
        {"id": f"TS{1000 + k}", "name": f"{word(rng)}-{word(rng)}",
         "shortDescription": {"text": sentence(rng, 5)},
         "defaultConfiguration": {"level": "error" if k % 3 == 0 else "warning"}}
        for k in range(12)
    ]
    items = []
    prefix = "file://" + quote(str(root.resolve()))
    for r in range(results):
        path = ts_paths[int(len(ts_paths) * rng.random() ** 1.5)]
        lines = (root / path).read_text().count("\n")
        k = rng.randrange(len(rules))
        level = "error" if rng.random() < 0.33 else "warning"
        if r % 2:
            location = {"uri": path, "uriBaseId": "%SRCROOT%"}
        else:
            location = {"uri": f"{prefix}/{quote(path)}"}
        line = rng.randint(1, max(1, lines))
        items.append({
            "ruleId": rules[k]["id"], "ruleIndex": k, "level": level,
            "message": {"text": sentence(rng, 9)},
            "locations": [{"physicalLocation": {
                "artifactLocation": location,
                "region": {"startLine": line, "startColumn": 1, "endLine": line, "endColumn": 10}}}],
        })
    sarif = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "bench-lint", "version": "1.0.0",
                                "informationUri": "https://example.invalid/bench-lint", "rules": rules}},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": prefix + "/"}},
            "results": items,
        }],
    }
    Path(out).write_text(json.dumps(sarif, indent=1) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--files", type=int, required=True)
    ap.add_argument("--ts-modules", type=int, default=0)
    ap.add_argument("--sarif")
    ap.add_argument("--sarif-results", type=int, default=1000)
    a = ap.parse_args()
    root = Path(a.dir)
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()):
        sys.exit(f"genrepo: {root} is not empty")
    rng = random.Random(20261130)
    written = 0

    def write(rel, text):
        nonlocal written
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        written += 1

    write("README.md", "# Benchmark repository\n\nGenerated by git-mas's bench/genrepo.py.\n")
    write(".gitignore", "node_modules/\n/index.scip\n/results.sarif\n")
    ts_paths = ts_module_paths(a.ts_modules)
    if ts_paths:
        write("package.json", json.dumps({"name": "bench-web", "version": "1.0.0", "private": True}, indent=2) + "\n")
        write("tsconfig.json", json.dumps({
            "compilerOptions": {"target": "es2020", "module": "commonjs", "strict": True, "noEmit": True},
            "include": ["web/src/**/*.ts"]}, indent=2) + "\n")
        ts_rng = random.Random(11)
        for i in range(len(ts_paths)):
            write(ts_paths[i], ts_module(i, ts_paths, ts_rng))
    for path in plain_paths(a.files - written, rng):
        write(path, plain_file(rng, path))
    if a.sarif:
        write_sarif(root, ts_paths, a.sarif, a.sarif_results, random.Random(3))
    print(f"genrepo: {written} files in {root}" + (f", {len(ts_paths)} TypeScript modules" if ts_paths else ""))


if __name__ == "__main__":
    main()
