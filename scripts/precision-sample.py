#!/usr/bin/env python3
"""Draws the seeded sample of duplicate groups that bench/precision/labels.jsonl
labels: `engine dupes --json` of each project of scripts/precision-corpus.sh,
then per project N groups (all when fewer), and every exact or renamed group
not drawn (few, and the kinds that deny without a similarity), two members of
each, printed with their text for a reviewer; then the same for the projects
held out in round 5, then for those held out in round 6. Usage:
precision-sample.py CORPUS DUPES_DIR."""
import json
import random
import sys

# Project -> (language, version, groups drawn).
PROJECTS = {
    "tokio": ("rust", "1.54.1", 30),
    "regex-automata": ("rust", "0.4.19", 22),
    "rich": ("python", "13.9.4", 23),
    "click": ("python", "8.1.7", 1),
    "jinja2": ("python", "3.1.4", 15),
    "pygments": ("python", "2.18.0", 22),
    "rxjs": ("typescript", "7.8.1", 9),
    "luxon": ("javascript", "3.5.0", 6),
    "three": ("javascript", "0.169.0", 24),
    "query-core": ("typescript", "5.59.0", 16),
}
# Drawn in round 5, after that round's rules were fixed and before they were
# measured on them (held out): drawn on their own, so the draws above are
# unchanged.
HELD_OUT = {
    "werkzeug": ("python", "3.0.3", 10),
    "httpx": ("python", "0.27.0", 10),
    "marshmallow": ("python", "3.21.3", 6),
}
# Drawn in round 6 the same way, before that round's rules were measured on
# them: projects of the languages round 5 held none out of.
HELD_OUT_6 = {
    "hyper": ("rust", "1.12.0", 15),
    "table-core": ("typescript", "8.20.5", 7),
    "ajv": ("typescript", "8.17.1", 9),
    "mobx": ("typescript", "6.13.5", 3),
    "moment": ("javascript", "2.30.1", 13),
    "jquery": ("javascript", "3.7.1", 4),
    "preact": ("javascript", "10.24.3", 1),
}
SEED = 44


def lines(corpus, project, unit, limit=28):
    path = f"{corpus}/{project}/{unit['file']}"
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read().splitlines()
    body = text[unit["line"] - 1 : unit["end_line"]]
    cut = body[:limit] + ([f"    ... ({len(body) - limit} more lines)"] if len(body) > limit else [])
    return "\n".join(cut)


def show(corpus, project, g, rng):
    lang, version, _ = {**PROJECTS, **HELD_OUT, **HELD_OUT_6}[project]
    a, b = sorted(rng.sample(g["units"], 2), key=lambda u: (u["file"], u["line"]))
    record = {
        "project": project, "language": lang, "version": version,
        "kind": g["rule"].removeprefix("copy."), "similarity": round(g["similarity"], 3),
        "group_size": len(g["units"]),
        "a": f"{a['file']}:{a['line']}", "b": f"{b['file']}:{b['line']}",
    }
    print("=" * 100)
    print(json.dumps(record))
    print("--- A", a["name"])
    print(lines(corpus, project, a))
    print("--- B", b["name"])
    print(lines(corpus, project, b))


def draw(corpus, dupes, projects):
    rng = random.Random(SEED)
    strong = []
    for project, (_, _, n) in projects.items():
        groups = json.load(open(f"{dupes}/{project}.json"))["groups"]
        drawn = sorted(rng.sample(range(len(groups)), min(n, len(groups))))
        for gi in drawn:
            show(corpus, project, groups[gi], rng)
        strong += [
            (project, g) for i, g in enumerate(groups) if g["rule"] != "copy.near" and i not in drawn
        ]
    for project, g in strong:
        show(corpus, project, g, rng)


def main():
    corpus, dupes = sys.argv[1], sys.argv[2]
    draw(corpus, dupes, PROJECTS)
    draw(corpus, dupes, HELD_OUT)
    draw(corpus, dupes, HELD_OUT_6)


main()
