//! The language table (docs/contract.md, "Languages"): one row per language mapping file
//! extensions to a tree-sitter grammar and the node kinds the rest of the engine cares
//! about. Code elsewhere asks a [`Lang`] for a kind's [`KindFlags`] instead of matching
//! on the language, so adding a language is adding a row.

//!
//! This root holds a row's compiled form and the lookups; the table's rows are
//! `table`, the layout tokens `layout`, and the source preparation `prepare`.

use std::borrow::Cow;
use std::sync::OnceLock;

use tree_sitter::Language;

mod layout;
mod prepare;
mod table;

pub use layout::Layout;
pub use prepare::{script_blocks_only, thin_hash_comments};
pub use table::TABLE;

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
}
