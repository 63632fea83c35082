//! Every grammar of the language table loads and parses (cargo cannot catch an ABI
//! mismatch), and each finds the units of a small snippet.

use sens_engine::config::RuleConfig;
use sens_engine::lang;
use sens_engine::units::{Fingerprinter, UnitKind, parse_file};

/// (language, file name, source, expected function name, expects a class, expects a window)
const SNIPPETS: &[(&str, &str, &str, &str, bool, bool)] = &[
    (
        "rust",
        "a.rs",
        "struct P { x: i32 }\nimpl P {\n    fn total(&self, a: i32) -> i32 {\n        let b = a + 1;\n        let c = b * 2;\n        let d = c - 3;\n        d + self.x\n    }\n}\n",
        "total",
        true,
        true,
    ),
    (
        "typescript",
        "a.ts",
        "class P {\n  total(a: number): number {\n    const b = a + 1;\n    const c = b * 2;\n    const d = c - 3;\n    return d;\n  }\n}\n",
        "total",
        true,
        true,
    ),
    (
        "tsx",
        "a.tsx",
        "export function Total(props: { a: number }) {\n  const b = props.a + 1;\n  const c = b * 2;\n  const d = c - 3;\n  return <div>{d}</div>;\n}\nclass Q {}\n",
        "Total",
        true,
        true,
    ),
    (
        "javascript",
        "a.js",
        "const total = (a) => {\n  const b = a + 1;\n  const c = b * 2;\n  const d = c - 3;\n  return d;\n};\nclass Q {}\n",
        "total",
        true,
        true,
    ),
    (
        "python",
        "a.py",
        "class P:\n    def total(self, a):\n        b = a + 1\n        c = b * 2\n        d = c - 3\n        return d\n",
        "total",
        true,
        true,
    ),
    (
        "go",
        "a.go",
        "package p\n\ntype P struct{ x int }\n\nfunc total(a int) int {\n\tb := a + 1\n\tc := b * 2\n\td := c - 3\n\treturn d\n}\n",
        "total",
        true,
        true,
    ),
    (
        "java",
        "A.java",
        "class P {\n  int total(int a) {\n    int b = a + 1;\n    int c = b * 2;\n    int d = c - 3;\n    return d;\n  }\n}\n",
        "total",
        true,
        true,
    ),
    (
        "c",
        "a.c",
        "struct p { int x; };\nint total(int a) {\n  int b = a + 1;\n  int c = b * 2;\n  int d = c - 3;\n  return d;\n}\n",
        "total",
        true,
        true,
    ),
    (
        "cpp",
        "a.cpp",
        "class P { int x; };\nint total(int a) {\n  int b = a + 1;\n  int c = b * 2;\n  int d = c - 3;\n  return d;\n}\n",
        "total",
        true,
        true,
    ),
    (
        "csharp",
        "A.cs",
        "class P {\n  int Total(int a) {\n    int b = a + 1;\n    int c = b * 2;\n    int d = c - 3;\n    return d;\n  }\n}\n",
        "Total",
        true,
        true,
    ),
    (
        "ruby",
        "a.rb",
        "class P\n  def total(a)\n    b = a + 1\n    c = b * 2\n    d = c - 3\n    d\n  end\nend\n",
        "total",
        true,
        true,
    ),
    (
        "php",
        "a.php",
        "<?php\nclass P {\n  function total($a) {\n    $b = $a + 1;\n    $c = $b * 2;\n    $d = $c - 3;\n    return $d;\n  }\n}\n",
        "total",
        true,
        true,
    ),
    (
        "bash",
        "a.sh",
        "total() {\n  b=$(( $1 + 1 ))\n  c=$(( b * 2 ))\n  d=$(( c - 3 ))\n  echo \"$d\"\n}\n",
        "total",
        false,
        true,
    ),
    (
        "kotlin",
        "a.kt",
        "class P {\n  fun total(a: Int): Int {\n    val b = a + 1\n    val c = b * 2\n    val d = c - 3\n    return d\n  }\n}\n",
        "total",
        true,
        true,
    ),
    (
        "swift",
        "a.swift",
        "class P {\n  func total(a: Int) -> Int {\n    let b = a + 1\n    let c = b * 2\n    let d = c - 3\n    return d\n  }\n}\n",
        "total",
        true,
        true,
    ),
    (
        "scala",
        "a.scala",
        "class P {\n  def total(a: Int): Int = {\n    val b = a + 1\n    val c = b * 2\n    val d = c - 3\n    d\n  }\n}\n",
        "total",
        true,
        true,
    ),
    (
        "lua",
        "a.lua",
        "function total(a)\n  local b = a + 1\n  local c = b * 2\n  local d = c - 3\n  return d\nend\n",
        "total",
        false,
        true,
    ),
    (
        "haskell",
        "a.hs",
        "module P where\ndata P = P Int\ntotal :: Int -> Int\ntotal a = a + 1 * 2 - 3\n",
        "total",
        true,
        false,
    ),
    (
        "elixir",
        "a.ex",
        "defmodule P do\n  def total(a) do\n    b = a + 1\n    c = b * 2\n    d = c - 3\n    d\n  end\n  def f do\n    g = fn x -> x + 1 end\n    g\n  end\nend\n",
        "g",
        false,
        true,
    ),
    (
        "ocaml",
        "a.ml",
        "type p = { x : int }\nlet total a =\n  let b = a + 1 in\n  b * 2 - 3\n",
        "total",
        true,
        false,
    ),
    (
        "zig",
        "a.zig",
        "const P = struct { x: i32 };\nfn total(a: i32) i32 {\n    const b = a + 1;\n    const c = b * 2;\n    const d = c - 3;\n    return d;\n}\n",
        "total",
        true,
        true,
    ),
    (
        "dart",
        "a.dart",
        "class P {\n  int total(int a) {\n    var b = a + 1;\n    var c = b * 2;\n    var d = c - 3;\n    return d;\n  }\n}\n",
        "total",
        true,
        true,
    ),
    (
        "vue",
        "A.vue",
        "<template>\n  <p>{{ total(2) }}</p>\n</template>\n<script lang=\"ts\">\nexport function total(a: number): number {\n  const b = a + 1;\n  const c = b * 2;\n  const d = c - 3;\n  return d;\n}\nclass Q {}\n</script>\n<style>p { color: red; }</style>\n",
        "total",
        true,
        true,
    ),
    (
        "svelte",
        "A.svelte",
        "<script>\n  function total(a) {\n    const b = a + 1;\n    const c = b * 2;\n    const d = c - 3;\n    return d;\n  }\n  class Q {}\n</script>\n<p>{total(2)}</p>\n",
        "total",
        true,
        true,
    ),
];

#[test]
fn every_grammar_parses_and_finds_units() {
    let fp = Fingerprinter::new(&RuleConfig::default());
    let mut covered = Vec::new();
    let mut failures = Vec::new();
    for &(name, file, source, function, class, window) in SNIPPETS {
        let lang = lang::for_path(file).unwrap_or_else(|| panic!("{file}: no language"));
        assert_eq!(lang.name(), name, "{file}");
        let parsed = parse_file(lang, source, &fp).unwrap();
        let has = |k: UnitKind| parsed.units.iter().any(|u| u.kind == k);
        let names: Vec<_> = parsed
            .units
            .iter()
            .map(|u| (u.kind, u.name.as_str()))
            .collect();
        if parsed.parse_errors
            || !parsed
                .units
                .iter()
                .any(|u| u.kind == UnitKind::Function && u.name == function)
            || has(UnitKind::Class) != class
            || has(UnitKind::Window) != window
        {
            failures.push(format!(
                "{name}: errors={} units={names:?}",
                parsed.parse_errors
            ));
        }
        covered.push(name);
    }
    assert!(failures.is_empty(), "{failures:#?}");
    // Units of single-file components keep the component's line numbers.
    let vue = lang::for_path("A.vue").unwrap();
    let vue_source = SNIPPETS.iter().find(|s| s.0 == "vue").map(|s| s.2).unwrap();
    let parsed = parse_file(vue, vue_source, &fp).unwrap();
    let total = parsed.units.iter().find(|u| u.name == "total").unwrap();
    assert_eq!((total.start_line, total.end_line), (5, 10));
    for lang in lang::all() {
        assert!(
            covered.contains(&lang.name()),
            "{} has no snippet",
            lang.name()
        );
    }
}
