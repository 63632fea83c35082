//! The language table (docs/contract.md, "Languages"): one row per language mapping file
//! extensions to a tree-sitter grammar and the node kinds the rest of the engine cares
//! about. Code elsewhere asks a [`Lang`] for a kind's [`KindFlags`] instead of matching
//! on the language, so adding a language is adding a row.

use std::borrow::Cow;
use std::sync::OnceLock;

use tree_sitter::Language;

/// One row of the table: names only; [`Lang`] is its compiled form.
pub struct LangSpec {
    /// Lower-case display name, also the key of `languages` in `engine index --json`.
    pub name: &'static str,
    /// File extensions without the dot, lower case.
    pub extensions: &'static [&'static str],
    pub grammar: fn() -> Language,
    /// Function-like units: functions, methods, constructors, closures with bodies.
    pub functions: &'static [&'static str],
    /// Class-like units: classes, structs, impls, traits, interfaces, enums, modules.
    pub classes: &'static [&'static str],
    /// Nodes whose named children are statements; windows are cut from them.
    pub blocks: &'static [&'static str],
    /// Leaves that name something; renamed fingerprints replace them by one placeholder.
    pub identifiers: &'static [&'static str],
    /// String-like literals (strings, characters, regexes); one token each.
    pub strings: &'static [&'static str],
    /// Numeric literals; one token each.
    pub numbers: &'static [&'static str],
    /// Dropped before fingerprinting.
    pub comments: &'static [&'static str],
    /// Call sites (used by the rules to tell references from definitions).
    pub calls: &'static [&'static str],
    /// Import/use declarations: never a blocking copy.
    pub imports: &'static [&'static str],
    /// Tokens a formatter may add, drop or move: left out of fingerprints.
    pub layout: Layout,
    /// What the grammar is given instead of the source (offsets and lines kept).
    pub prepare: Prepare,
}

/// The text a grammar parses, made from the source with every byte offset and
/// line kept (only characters are replaced by spaces).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prepare {
    /// The source as it is.
    Source,
    /// Single-file components (Vue, Svelte): only the `<script>` blocks are code;
    /// the rest is blanked.
    ScriptBlocks,
    /// Runs of `#` comment lines are blanked but for their last
    /// [`KEPT_COMMENT_LINES`] lines (where doc comments stand, right before a
    /// definition). tree-sitter-python's scanner looks past every comment line
    /// for the next line's indentation at each line break, so a run of n comment
    /// lines costs n^2: 4,000 of them took seconds to parse.
    ThinHashComments,
}

/// Comment lines of a run kept by [`Prepare::ThinHashComments`].
pub const KEPT_COMMENT_LINES: usize = 32;

/// The layout tokens of a language, by node kind. Formatters add, drop and move
/// them without changing the code, so a copy retyped in another style must
/// fingerprint the same (docs/fingerprints.md, "Layout-free tokens").
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// Statement terminators a formatter may add or drop (`;`), and line
    /// continuations: dropped wherever they stand.
    pub terminators: &'static [&'static str],
    /// List separators, dropped when they end their list (a trailing `,` before
    /// the closing bracket, or the last child of its node).
    pub separators: &'static [&'static str],
    /// Named nodes whose own brackets only group or are always written
    /// (`parenthesized_expression`): the brackets are dropped, the content kept.
    pub groupings: &'static [&'static str],
    /// Blocks whose braces a formatter adds or drops around a single statement
    /// (astyle `--add-braces`/`--remove-braces`, clang-format
    /// `RemoveBracesLLVM`, rustfmt wrapping a long match arm or unwrapping a
    /// closure body): the braces of one holding one statement are dropped.
    pub braces: &'static [&'static str],
    /// Key-value nodes whose key may be quoted or not (`{ "a": 1 }` and
    /// `{ a: 1 }`, prettier `--quote-props`): a string key whose content is a
    /// name is that name.
    pub keys: &'static [&'static str],
    /// Key-value nodes written shorthand when the value is a name equal to the
    /// key (`S { x: x }` and `S { x }`, rustfmt `use_field_init_shorthand`,
    /// eslint `object-shorthand`): the key and its `:` are dropped then.
    pub shorthands: &'static [&'static str],
    /// Nodes whose first token is an optional separator (the `|` opening a
    /// Rust or-pattern, rustfmt `match_arm_leading_pipes`): dropped there.
    pub leading: &'static [&'static str],
    /// Tuples that may stand bare, and the nodes where they may
    /// (`return a, b` and `return (a, b)`: black wraps a long one in
    /// brackets): the brackets of such a tuple directly under such a node
    /// are dropped. Elsewhere (`f((a, b))`) they mean something.
    pub tuples: &'static [&'static str],
    pub bare_tuple_places: &'static [&'static str],
    /// Literals whose `type` may be left out where the enclosing literal
    /// implies it, and the nodes where it may (`gofmt -s`: `[]T{T{1}}` and
    /// `[]T{{1}}`): the type of such a literal directly under such a node is
    /// dropped.
    pub implied_types: &'static [&'static str],
    pub implied_type_places: &'static [&'static str],
}

/// The layout of the C family and most others: `;`, trailing `,`, `( expr )`.
const C_LAYOUT: Layout = Layout {
    terminators: &[";"],
    separators: &[","],
    groupings: &["parenthesized_expression"],
    braces: &[],
    keys: &[],
    shorthands: &[],
    leading: &[],
    tuples: &[],
    bare_tuple_places: &[],
    implied_types: &[],
    implied_type_places: &[],
};

/// C, C++ and PHP: also optional braces of compound statements.
const C_BRACED_LAYOUT: Layout = Layout {
    braces: &["compound_statement"],
    ..C_LAYOUT
};

/// Java and C#: also optional braces of blocks.
const BLOCK_BRACED_LAYOUT: Layout = Layout {
    braces: &["block"],
    ..C_LAYOUT
};

/// Go: also the element types `gofmt -s` leaves out.
const GO_LAYOUT: Layout = Layout {
    implied_types: &["composite_literal"],
    implied_type_places: &["literal_element"],
    ..C_LAYOUT
};

/// Rust: also the braces of a one-expression block (a match arm's body, a
/// closure's), the field init shorthand and a match arm's leading `|`.
const RUST_LAYOUT: Layout = Layout {
    braces: &["block"],
    shorthands: &["field_initializer"],
    leading: &["or_pattern"],
    ..C_LAYOUT
};

/// What a node kind means to the engine; a kind may carry several flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KindFlags(u32);

impl KindFlags {
    pub const FUNCTION: Self = Self(1);
    pub const CLASS: Self = Self(1 << 1);
    pub const BLOCK: Self = Self(1 << 2);
    pub const IDENTIFIER: Self = Self(1 << 3);
    pub const STRING: Self = Self(1 << 4);
    pub const NUMBER: Self = Self(1 << 5);
    pub const COMMENT: Self = Self(1 << 6);
    pub const CALL: Self = Self(1 << 7);
    pub const IMPORT: Self = Self(1 << 8);
    pub const TERMINATOR: Self = Self(1 << 9);
    pub const SEPARATOR: Self = Self(1 << 10);
    pub const GROUPING: Self = Self(1 << 11);
    pub const BRACES: Self = Self(1 << 12);
    pub const KEYS: Self = Self(1 << 13);
    pub const SHORTHAND: Self = Self(1 << 14);
    pub const LEADING: Self = Self(1 << 15);
    pub const TUPLE: Self = Self(1 << 16);
    pub const BARE_TUPLE_PLACE: Self = Self(1 << 17);
    pub const IMPLIED_TYPE: Self = Self(1 << 18);
    pub const IMPLIED_TYPE_PLACE: Self = Self(1 << 19);

    pub fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0 && other.0 != 0
    }

    pub fn intersects(self, other: Self) -> bool {
        self.0 & other.0 != 0
    }
}

impl std::ops::BitOr for KindFlags {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

impl std::ops::BitOrAssign for KindFlags {
    fn bitor_assign(&mut self, rhs: Self) {
        self.0 |= rhs.0;
    }
}

/// A row compiled against its grammar: flags indexed by node kind id.
pub struct Lang {
    pub spec: &'static LangSpec,
    pub language: Language,
    flags: Vec<KindFlags>,
    /// Kind names of the row that the grammar does not know (a typo or a grammar
    /// change); a test asserts this is empty for every row.
    pub unknown_kinds: Vec<&'static str>,
}

impl std::fmt::Debug for Lang {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lang")
            .field("name", &self.spec.name)
            .finish()
    }
}

impl Lang {
    fn compile(spec: &'static LangSpec) -> Self {
        let language = (spec.grammar)();
        let mut flags = vec![KindFlags::default(); language.node_kind_count()];
        let mut unknown_kinds = Vec::new();
        // Terminators and separators are punctuation (anonymous kinds), except
        // line continuations, which some grammars name.
        let groups: [(&[&'static str], KindFlags, Option<bool>); 20] = [
            (spec.functions, KindFlags::FUNCTION, Some(true)),
            (spec.classes, KindFlags::CLASS, Some(true)),
            (spec.blocks, KindFlags::BLOCK, Some(true)),
            (spec.identifiers, KindFlags::IDENTIFIER, Some(true)),
            (spec.strings, KindFlags::STRING, Some(true)),
            (spec.numbers, KindFlags::NUMBER, Some(true)),
            (spec.comments, KindFlags::COMMENT, Some(true)),
            (spec.calls, KindFlags::CALL, Some(true)),
            (spec.imports, KindFlags::IMPORT, Some(true)),
            (spec.layout.terminators, KindFlags::TERMINATOR, None),
            (spec.layout.separators, KindFlags::SEPARATOR, Some(false)),
            (spec.layout.groupings, KindFlags::GROUPING, Some(true)),
            (spec.layout.braces, KindFlags::BRACES, Some(true)),
            (spec.layout.keys, KindFlags::KEYS, Some(true)),
            (spec.layout.shorthands, KindFlags::SHORTHAND, Some(true)),
            (spec.layout.leading, KindFlags::LEADING, Some(true)),
            (spec.layout.tuples, KindFlags::TUPLE, Some(true)),
            (
                spec.layout.bare_tuple_places,
                KindFlags::BARE_TUPLE_PLACE,
                Some(true),
            ),
            (
                spec.layout.implied_types,
                KindFlags::IMPLIED_TYPE,
                Some(true),
            ),
            (
                spec.layout.implied_type_places,
                KindFlags::IMPLIED_TYPE_PLACE,
                Some(true),
            ),
        ];
        for (names, flag, named) in groups {
            for &name in names {
                // A grammar may give one name several ids (aliases); flag them all.
                let mut found = false;
                for (id, slot) in flags.iter_mut().enumerate() {
                    let Ok(id) = u16::try_from(id) else { break };
                    if named.is_none_or(|n| language.node_kind_is_named(id) == n)
                        && language.node_kind_for_id(id) == Some(name)
                    {
                        *slot |= flag;
                        found = true;
                    }
                }
                if !found {
                    unknown_kinds.push(name);
                }
            }
        }
        Self {
            spec,
            language,
            flags,
            unknown_kinds,
        }
    }

    /// The flags of a node kind; anonymous kinds (punctuation, keywords) have at
    /// most the layout flags.
    pub fn flags(&self, kind_id: u16) -> KindFlags {
        self.flags
            .get(usize::from(kind_id))
            .copied()
            .unwrap_or_default()
    }

    pub fn name(&self) -> &'static str {
        self.spec.name
    }

    /// The text the grammar parses (see [`Prepare`]).
    pub fn prepare<'a>(&self, source: &'a str) -> Cow<'a, str> {
        match self.spec.prepare {
            Prepare::Source => Cow::Borrowed(source),
            Prepare::ScriptBlocks => Cow::Owned(script_blocks_only(source)),
            Prepare::ThinHashComments => thin_hash_comments(source, KEPT_COMMENT_LINES),
        }
    }
}

/// Blanks the `#` comment lines of each run of them but its last `keep`. A run is
/// broken by any line of code; blank lines do not break it (the scanner skips
/// them too). Lines holding a quote or a backslash are left alone, so blanking a
/// line inside a multi-line string never moves where the string ends.
pub fn thin_hash_comments(source: &str, keep: usize) -> Cow<'_, str> {
    let mut blanked: Vec<std::ops::Range<usize>> = Vec::new();
    let mut run: Vec<std::ops::Range<usize>> = Vec::new();
    let mut close_run = |run: &mut Vec<std::ops::Range<usize>>| {
        let cut = run.len().saturating_sub(keep);
        blanked.extend(run.drain(..cut));
        run.clear();
    };
    let mut offset = 0;
    for line in source.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let code = body.trim_start();
        let range = offset..offset + body.len();
        offset += line.len();
        if code.is_empty() {
            continue;
        }
        if code.starts_with('#') && !code.contains(['"', '\'', '\\']) {
            run.push(range);
        } else {
            close_run(&mut run);
        }
    }
    close_run(&mut run);
    if blanked.is_empty() {
        return Cow::Borrowed(source);
    }
    let mut out = String::with_capacity(source.len());
    let mut from = 0;
    for range in blanked {
        out.push_str(&source[from..range.start]);
        out.extend(std::iter::repeat_n(' ', range.len()));
        from = range.end;
    }
    out.push_str(&source[from..]);
    Cow::Owned(out)
}

/// Replaces every character outside `<script ...>` ... `</script>` with spaces
/// of the same byte length, keeping newlines, so offsets and lines still match.
pub fn script_blocks_only(source: &str) -> String {
    let lower = source.to_ascii_lowercase();
    let mut keep: Vec<(usize, usize)> = Vec::new();
    let mut from = 0;
    while let Some(open) = lower[from..].find("<script").map(|i| i + from) {
        let Some(body) = lower[open..].find('>').map(|i| open + i + 1) else {
            break;
        };
        let end = lower[body..]
            .find("</script")
            .map_or(source.len(), |i| body + i);
        keep.push((body, end));
        from = end;
    }
    let mut out = String::with_capacity(source.len());
    let mut ranges = keep.iter().peekable();
    for (i, ch) in source.char_indices() {
        while ranges.peek().is_some_and(|&&(_, end)| end <= i) {
            ranges.next();
        }
        let inside = ranges.peek().is_some_and(|&&(start, _)| start <= i);
        if inside || ch == '\n' {
            out.push(ch);
        } else {
            out.extend(std::iter::repeat_n(' ', ch.len_utf8()));
        }
    }
    out
}

/// Every compiled row, in table order.
pub fn all() -> &'static [Lang] {
    static LANGS: OnceLock<Vec<Lang>> = OnceLock::new();
    LANGS.get_or_init(|| TABLE.iter().map(Lang::compile).collect())
}

/// The language of a path, by its extension (case-insensitive).
pub fn for_path(path: &str) -> Option<&'static Lang> {
    let file = path.rsplit('/').next().unwrap_or(path);
    let (_, ext) = file.rsplit_once('.')?;
    let ext = ext.to_ascii_lowercase();
    all()
        .iter()
        .find(|lang| lang.spec.extensions.contains(&ext.as_str()))
}

const C_COMMENT: &[&str] = &["comment"];

/// The table. Kind names are checked against each grammar by a test.
pub static TABLE: &[LangSpec] = &[
    LangSpec {
        name: "rust",
        extensions: &["rs"],
        grammar: || tree_sitter_rust::LANGUAGE.into(),
        // A trait's required methods (`fn is_even(&self) -> bool;`) carry its
        // API's doc comments.
        functions: &["function_item", "function_signature_item"],
        classes: &[
            "struct_item",
            "enum_item",
            "union_item",
            "impl_item",
            "trait_item",
        ],
        blocks: &["block"],
        identifiers: &[
            "identifier",
            "type_identifier",
            "field_identifier",
            "shorthand_field_identifier",
        ],
        strings: &["string_literal", "raw_string_literal", "char_literal"],
        numbers: &["integer_literal", "float_literal"],
        comments: &["line_comment", "block_comment"],
        calls: &["call_expression", "macro_invocation"],
        imports: &["use_declaration", "extern_crate_declaration"],
        layout: RUST_LAYOUT,
        prepare: Prepare::Source,
    },
    LangSpec {
        name: "typescript",
        extensions: &["ts", "mts", "cts"],
        grammar: || tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        functions: TS_FUNCTIONS,
        classes: TS_CLASSES,
        blocks: &["statement_block"],
        identifiers: TS_IDENTIFIERS,
        strings: JS_STRINGS,
        numbers: &["number"],
        comments: &["comment", "html_comment"],
        calls: JS_CALLS,
        imports: &["import_statement"],
        layout: TS_LAYOUT,
        prepare: Prepare::Source,
    },
    LangSpec {
        name: "tsx",
        extensions: &["tsx"],
        grammar: || tree_sitter_typescript::LANGUAGE_TSX.into(),
        functions: TS_FUNCTIONS,
        classes: TS_CLASSES,
        blocks: &["statement_block"],
        identifiers: TS_IDENTIFIERS,
        strings: JS_STRINGS,
        numbers: &["number"],
        comments: &["comment", "html_comment"],
        calls: JS_CALLS,
        imports: &["import_statement"],
        layout: TS_LAYOUT,
        prepare: Prepare::Source,
    },
    LangSpec {
        name: "javascript",
        extensions: &["js", "jsx", "mjs", "cjs"],
        grammar: || tree_sitter_javascript::LANGUAGE.into(),
        functions: JS_FUNCTIONS,
        classes: &["class_declaration", "class"],
        blocks: &["statement_block"],
        identifiers: JS_IDENTIFIERS,
        strings: JS_STRINGS,
        numbers: &["number"],
        comments: &["comment", "html_comment"],
        calls: JS_CALLS,
        imports: &["import_statement"],
        layout: JS_LAYOUT,
        prepare: Prepare::Source,
    },
    LangSpec {
        name: "python",
        extensions: &["py", "pyi"],
        grammar: || tree_sitter_python::LANGUAGE.into(),
        functions: &["function_definition"],
        classes: &["class_definition"],
        blocks: &["block"],
        identifiers: &["identifier"],
        strings: &["string", "concatenated_string"],
        numbers: &["integer", "float"],
        comments: C_COMMENT,
        calls: &["call"],
        imports: &[
            "import_statement",
            "import_from_statement",
            "future_import_statement",
        ],
        layout: Layout {
            terminators: &[";", "line_continuation"],
            separators: &[","],
            groupings: &["parenthesized_expression"],
            tuples: &["tuple", "tuple_pattern"],
            bare_tuple_places: &[
                "return_statement",
                "expression_statement",
                "assignment",
                "augmented_assignment",
                "for_statement",
                "for_in_clause",
                "subscript",
                "yield",
                "delete_statement",
            ],
            ..C_LAYOUT
        },
        prepare: Prepare::ThinHashComments,
    },
    LangSpec {
        name: "go",
        extensions: &["go"],
        grammar: || tree_sitter_go::LANGUAGE.into(),
        functions: &["function_declaration", "method_declaration", "func_literal"],
        classes: &["type_declaration"],
        blocks: &["statement_list"],
        identifiers: &[
            "identifier",
            "field_identifier",
            "type_identifier",
            "package_identifier",
        ],
        strings: &[
            "interpreted_string_literal",
            "raw_string_literal",
            "rune_literal",
        ],
        numbers: &["int_literal", "float_literal", "imaginary_literal"],
        comments: C_COMMENT,
        calls: &["call_expression"],
        imports: &["import_declaration"],
        layout: GO_LAYOUT,
        prepare: Prepare::Source,
    },
    LangSpec {
        name: "java",
        extensions: &["java"],
        grammar: || tree_sitter_java::LANGUAGE.into(),
        functions: &["method_declaration", "constructor_declaration"],
        classes: &[
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
            "annotation_type_declaration",
        ],
        blocks: &["block", "constructor_body"],
        identifiers: &["identifier", "type_identifier"],
        strings: &["string_literal", "character_literal"],
        numbers: &[
            "decimal_integer_literal",
            "hex_integer_literal",
            "octal_integer_literal",
            "binary_integer_literal",
            "decimal_floating_point_literal",
            "hex_floating_point_literal",
        ],
        comments: &["line_comment", "block_comment"],
        calls: &["method_invocation", "object_creation_expression"],
        imports: &["import_declaration"],
        layout: BLOCK_BRACED_LAYOUT,
        prepare: Prepare::Source,
    },
    LangSpec {
        name: "c",
        extensions: &["c", "h"],
        grammar: || tree_sitter_c::LANGUAGE.into(),
        functions: &["function_definition"],
        classes: &["struct_specifier", "enum_specifier", "union_specifier"],
        blocks: &["compound_statement"],
        identifiers: &[
            "identifier",
            "field_identifier",
            "type_identifier",
            "statement_identifier",
        ],
        strings: &[
            "string_literal",
            "char_literal",
            "concatenated_string",
            "system_lib_string",
        ],
        numbers: &["number_literal"],
        comments: C_COMMENT,
        calls: &["call_expression"],
        imports: &["preproc_include"],
        layout: C_BRACED_LAYOUT,
        prepare: Prepare::Source,
    },
    LangSpec {
        name: "cpp",
        extensions: &["cc", "cpp", "cxx", "hpp", "hh", "hxx"],
        grammar: || tree_sitter_cpp::LANGUAGE.into(),
        functions: &["function_definition"],
        classes: &[
            "class_specifier",
            "struct_specifier",
            "enum_specifier",
            "union_specifier",
        ],
        blocks: &["compound_statement"],
        identifiers: &[
            "identifier",
            "field_identifier",
            "type_identifier",
            "namespace_identifier",
            "statement_identifier",
        ],
        strings: &[
            "string_literal",
            "raw_string_literal",
            "char_literal",
            "concatenated_string",
            "system_lib_string",
        ],
        numbers: &["number_literal"],
        comments: C_COMMENT,
        calls: &["call_expression", "new_expression"],
        imports: &["preproc_include", "using_declaration"],
        layout: C_BRACED_LAYOUT,
        prepare: Prepare::Source,
    },
    LangSpec {
        name: "csharp",
        extensions: &["cs"],
        grammar: || tree_sitter_c_sharp::LANGUAGE.into(),
        functions: &[
            "method_declaration",
            "constructor_declaration",
            "destructor_declaration",
            "operator_declaration",
            "local_function_statement",
        ],
        classes: &[
            "class_declaration",
            "interface_declaration",
            "struct_declaration",
            "enum_declaration",
            "record_declaration",
        ],
        blocks: &["block"],
        identifiers: &["identifier"],
        strings: &[
            "string_literal",
            "verbatim_string_literal",
            "raw_string_literal",
            "interpolated_string_expression",
            "character_literal",
        ],
        numbers: &["integer_literal", "real_literal"],
        comments: C_COMMENT,
        calls: &["invocation_expression", "object_creation_expression"],
        imports: &["using_directive"],
        layout: BLOCK_BRACED_LAYOUT,
        prepare: Prepare::Source,
    },
    LangSpec {
        name: "ruby",
        extensions: &["rb"],
        grammar: || tree_sitter_ruby::LANGUAGE.into(),
        functions: &["method", "singleton_method"],
        classes: &["class", "module"],
        blocks: &["body_statement", "block_body"],
        identifiers: &[
            "identifier",
            "constant",
            "instance_variable",
            "class_variable",
            "global_variable",
        ],
        strings: &["string", "simple_symbol", "character", "regex"],
        numbers: &["integer", "float"],
        comments: C_COMMENT,
        calls: &["call"],
        imports: &[],
        layout: Layout {
            terminators: &[";"],
            separators: &[","],
            groupings: &["parenthesized_statements"],
            ..C_LAYOUT
        },
        prepare: Prepare::Source,
    },
    LangSpec {
        name: "php",
        extensions: &["php"],
        grammar: || tree_sitter_php::LANGUAGE_PHP.into(),
        functions: &[
            "function_definition",
            "method_declaration",
            "anonymous_function",
            "arrow_function",
        ],
        classes: &[
            "class_declaration",
            "interface_declaration",
            "trait_declaration",
            "enum_declaration",
        ],
        blocks: &["compound_statement"],
        identifiers: &["name"],
        strings: &["string", "encapsed_string", "heredoc", "nowdoc"],
        numbers: &["integer", "float"],
        comments: C_COMMENT,
        calls: &[
            "function_call_expression",
            "member_call_expression",
            "scoped_call_expression",
        ],
        imports: &["namespace_use_declaration"],
        layout: C_BRACED_LAYOUT,
        prepare: Prepare::Source,
    },
    LangSpec {
        name: "bash",
        extensions: &["sh", "bash"],
        grammar: || tree_sitter_bash::LANGUAGE.into(),
        functions: &["function_definition"],
        classes: &[],
        blocks: &["compound_statement", "do_group"],
        identifiers: &["variable_name"],
        strings: &["string", "raw_string", "ansi_c_string"],
        numbers: &["number"],
        comments: C_COMMENT,
        calls: &["command"],
        imports: &[],
        layout: Layout {
            terminators: &[";"],
            separators: &[],
            groupings: &["command_substitution"],
            ..C_LAYOUT
        },
        prepare: Prepare::Source,
    },
    LangSpec {
        name: "kotlin",
        extensions: &["kt", "kts"],
        grammar: || tree_sitter_kotlin_ng::LANGUAGE.into(),
        functions: &[
            "function_declaration",
            "secondary_constructor",
            "anonymous_function",
        ],
        classes: &["class_declaration", "object_declaration"],
        blocks: &["block"],
        identifiers: &["identifier"],
        strings: &[
            "string_literal",
            "multiline_string_literal",
            "character_literal",
        ],
        numbers: &["number_literal", "float_literal"],
        comments: &["line_comment", "block_comment"],
        calls: &["call_expression"],
        imports: &["import"],
        layout: C_LAYOUT,
        prepare: Prepare::Source,
    },
    LangSpec {
        name: "swift",
        extensions: &["swift"],
        grammar: || tree_sitter_swift::LANGUAGE.into(),
        functions: &[
            "function_declaration",
            "init_declaration",
            "deinit_declaration",
        ],
        classes: &["class_declaration", "protocol_declaration"],
        blocks: &["statements"],
        identifiers: &["simple_identifier", "type_identifier"],
        strings: &[
            "line_string_literal",
            "multi_line_string_literal",
            "raw_string_literal",
        ],
        numbers: &[
            "integer_literal",
            "real_literal",
            "hex_literal",
            "oct_literal",
            "bin_literal",
        ],
        comments: &["comment", "multiline_comment"],
        calls: &["call_expression"],
        imports: &["import_declaration"],
        layout: Layout {
            terminators: &[";"],
            separators: &[","],
            groupings: &[],
            ..C_LAYOUT
        },
        prepare: Prepare::Source,
    },
    LangSpec {
        name: "scala",
        extensions: &["scala", "sc"],
        grammar: || tree_sitter_scala::LANGUAGE.into(),
        functions: &["function_definition"],
        classes: &[
            "class_definition",
            "object_definition",
            "trait_definition",
            "enum_definition",
        ],
        blocks: &["block", "indented_block"],
        identifiers: &["identifier", "type_identifier"],
        strings: &[
            "string",
            "interpolated_string_expression",
            "character_literal",
        ],
        numbers: &["integer_literal", "floating_point_literal"],
        comments: &["comment", "block_comment"],
        calls: &["call_expression"],
        imports: &["import_declaration"],
        layout: C_LAYOUT,
        prepare: Prepare::Source,
    },
    LangSpec {
        name: "lua",
        extensions: &["lua"],
        grammar: || tree_sitter_lua::LANGUAGE.into(),
        functions: &["function_declaration", "function_definition"],
        classes: &[],
        blocks: &["block"],
        identifiers: &["identifier"],
        strings: &["string"],
        numbers: &["number"],
        comments: C_COMMENT,
        calls: &["function_call"],
        imports: &[],
        layout: C_LAYOUT,
        prepare: Prepare::Source,
    },
    LangSpec {
        name: "haskell",
        extensions: &["hs"],
        grammar: || tree_sitter_haskell::LANGUAGE.into(),
        functions: &["function"],
        classes: &["data_type", "newtype", "class", "instance"],
        blocks: &[],
        identifiers: &["variable", "constructor", "name"],
        strings: &["string", "char"],
        numbers: &["integer", "float"],
        comments: C_COMMENT,
        calls: &["apply"],
        imports: &["import"],
        layout: Layout {
            terminators: &[";"],
            separators: &[","],
            groupings: &["parens"],
            ..C_LAYOUT
        },
        prepare: Prepare::Source,
    },
    LangSpec {
        name: "elixir",
        extensions: &["ex", "exs"],
        grammar: || tree_sitter_elixir::LANGUAGE.into(),
        functions: &["anonymous_function"],
        classes: &[],
        blocks: &["do_block"],
        identifiers: &["identifier", "alias"],
        strings: &["string", "charlist", "char", "atom"],
        numbers: &["integer", "float"],
        comments: C_COMMENT,
        calls: &["call"],
        imports: &[],
        layout: Layout {
            terminators: &[";"],
            separators: &[","],
            groupings: &[],
            ..C_LAYOUT
        },
        prepare: Prepare::Source,
    },
    LangSpec {
        name: "ocaml",
        extensions: &["ml"],
        grammar: || tree_sitter_ocaml::LANGUAGE_OCAML.into(),
        functions: &["let_binding"],
        classes: &["module_definition", "class_definition", "type_definition"],
        blocks: &[],
        identifiers: &[
            "value_name",
            "module_name",
            "type_constructor",
            "field_name",
            "constructor_name",
        ],
        strings: &["string", "character", "quoted_string"],
        numbers: &["number", "signed_number"],
        comments: C_COMMENT,
        calls: &["application_expression"],
        imports: &["open_module"],
        layout: C_LAYOUT,
        prepare: Prepare::Source,
    },
    LangSpec {
        name: "zig",
        extensions: &["zig"],
        grammar: || tree_sitter_zig::LANGUAGE.into(),
        functions: &["function_declaration"],
        classes: &[
            "struct_declaration",
            "enum_declaration",
            "union_declaration",
        ],
        blocks: &["block"],
        identifiers: &["identifier", "builtin_identifier"],
        strings: &["string", "multiline_string", "character"],
        numbers: &["integer", "float"],
        comments: C_COMMENT,
        calls: &["call_expression"],
        imports: &[],
        layout: C_LAYOUT,
        prepare: Prepare::Source,
    },
    LangSpec {
        name: "dart",
        extensions: &["dart"],
        grammar: || tree_sitter_dart::LANGUAGE.into(),
        functions: &[
            "function_declaration",
            "method_declaration",
            "local_function_declaration",
        ],
        classes: &[
            "class_declaration",
            "enum_declaration",
            "mixin_declaration",
            "extension_declaration",
        ],
        blocks: &["block"],
        identifiers: &["identifier", "type_identifier"],
        strings: &["string_literal"],
        numbers: &[
            "decimal_integer_literal",
            "decimal_floating_point_literal",
            "hex_integer_literal",
        ],
        comments: &["comment", "documentation_comment"],
        calls: &["call_expression"],
        imports: &["import_or_export"],
        layout: C_LAYOUT,
        prepare: Prepare::Source,
    },
    LangSpec {
        name: "vue",
        extensions: &["vue"],
        grammar: || tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        functions: TS_FUNCTIONS,
        classes: TS_CLASSES,
        blocks: &["statement_block"],
        identifiers: TS_IDENTIFIERS,
        strings: JS_STRINGS,
        numbers: &["number"],
        comments: &["comment", "html_comment"],
        calls: JS_CALLS,
        imports: &["import_statement"],
        layout: TS_LAYOUT,
        prepare: Prepare::ScriptBlocks,
    },
    LangSpec {
        name: "svelte",
        extensions: &["svelte"],
        grammar: || tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        functions: TS_FUNCTIONS,
        classes: TS_CLASSES,
        blocks: &["statement_block"],
        identifiers: TS_IDENTIFIERS,
        strings: JS_STRINGS,
        numbers: &["number"],
        comments: &["comment", "html_comment"],
        calls: JS_CALLS,
        imports: &["import_statement"],
        layout: TS_LAYOUT,
        prepare: Prepare::ScriptBlocks,
    },
];

const JS_FUNCTIONS: &[&str] = &[
    "function_declaration",
    "function_expression",
    "arrow_function",
    "method_definition",
    "generator_function_declaration",
    "generator_function",
];
const TS_FUNCTIONS: &[&str] = JS_FUNCTIONS;
const TS_CLASSES: &[&str] = &[
    "class_declaration",
    "class",
    "abstract_class_declaration",
    "interface_declaration",
    "enum_declaration",
];
const JS_IDENTIFIERS: &[&str] = &[
    "identifier",
    "property_identifier",
    "shorthand_property_identifier",
    "shorthand_property_identifier_pattern",
    "private_property_identifier",
    "statement_identifier",
];
const TS_IDENTIFIERS: &[&str] = &[
    "identifier",
    "property_identifier",
    "shorthand_property_identifier",
    "shorthand_property_identifier_pattern",
    "private_property_identifier",
    "statement_identifier",
    "type_identifier",
];
/// JS/TS: also the brackets of parameter lists, which `x => x` leaves out and
/// a formatter may add, optional braces, quoted keys and shorthand properties.
const JS_LAYOUT: Layout = Layout {
    terminators: &[";"],
    separators: &[","],
    groupings: &["parenthesized_expression", "formal_parameters"],
    braces: &["statement_block"],
    keys: &["pair", "method_definition"],
    shorthands: &["pair"],
    leading: &[],
    tuples: &[],
    bare_tuple_places: &[],
    implied_types: &[],
    implied_type_places: &[],
};
/// TypeScript: also the keys of interface members and class fields.
const TS_LAYOUT: Layout = Layout {
    keys: &[
        "pair",
        "method_definition",
        "property_signature",
        "public_field_definition",
    ],
    ..JS_LAYOUT
};
const JS_STRINGS: &[&str] = &["string", "template_string", "regex"];
const JS_CALLS: &[&str] = &["call_expression", "new_expression"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_name_of_the_table_exists_in_its_grammar() {
        for lang in all() {
            assert!(
                lang.unknown_kinds.is_empty(),
                "{}: unknown kinds {:?}",
                lang.name(),
                lang.unknown_kinds
            );
        }
    }

    #[test]
    fn extensions_are_unique_and_found_case_insensitively() {
        let mut seen = std::collections::HashSet::new();
        for spec in TABLE {
            for ext in spec.extensions {
                assert!(seen.insert(*ext), "extension {ext} listed twice");
            }
        }
        assert_eq!(for_path("src/Main.RS").map(Lang::name), Some("rust"));
        assert_eq!(for_path("a/b.tsx").map(Lang::name), Some("tsx"));
        assert!(for_path("README").is_none());
        assert!(for_path("x.unknown").is_none());
    }

    #[test]
    fn script_blocks_keep_offsets_and_lines() {
        let src = "<template>\n  <p>{{ é }}</p>\n</template>\n<script lang=\"ts\">\nconst a = 1;\n</script>\n<style>p {}</style>\n";
        let out = script_blocks_only(src);
        assert_eq!(out.len(), src.len());
        assert_eq!(out.lines().count(), src.lines().count());
        assert!(out.contains("\nconst a = 1;\n"));
        assert!(!out.contains("template") && !out.contains("style") && !out.contains("script"));
    }

    #[test]
    fn comment_runs_are_blanked_but_their_last_lines() {
        let src = "x = 1\n# é a\n  # b\n\n# c\ny = 2\n# d\ns = \"\"\"\n# in 'q'\n\"\"\"\n";
        let out = thin_hash_comments(src, 2);
        assert_eq!(
            out,
            "x = 1\n      \n  # b\n\n# c\ny = 2\n# d\ns = \"\"\"\n# in 'q'\n\"\"\"\n"
        );
        assert_eq!(out.len(), src.len());
        let short = "# a\n# b\nx = 1\n";
        assert!(matches!(thin_hash_comments(short, 2), Cow::Borrowed(s) if s == short));
    }
}
