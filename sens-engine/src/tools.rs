//! The engine as something the agent can ask: two query tools over the index,
//! which the hook session's holder serves to the agent as MCP tools. Pure: an
//! answer depends only on the index and the input, so it is what the index holds
//! at the session's last rescan.
//!
//! - `already_exists` takes code and/or a description. Code is parsed as a new
//!   file and looked up with the change rules' own copy lookup
//!   ([`rules::copy_findings`]: exact, renamed and near copies, one per copied
//!   region) and the re-implementation finder ([`reuse::find`]: each function
//!   of the code whose equivalent the project has, under any name); the
//!   description goes through the suggestion search ([`suggest::suggest`]).
//!   Each says nothing when nothing is close enough, so the answer can be that
//!   nothing like this exists.
//! - `find_symbol` takes a name or part of one: every function and class whose
//!   name holds it, ignoring case and `_`/`-` (so `parseAmount` finds
//!   `parse_amount`), exact names first, then prefixes, then the most used; test
//!   code after the project's own.

use serde::Serialize;
use serde_json::{Value, json};

use crate::finding::{Finding, Suggestion};
use crate::index::{Index, Unit};
use crate::lang;
use crate::paths::is_test_path;
use crate::reuse;
use crate::rules;
use crate::suggest;
use crate::units::UnitKind;

pub const ALREADY_EXISTS: &str = "already_exists";
pub const FIND_SYMBOL: &str = "find_symbol";
/// At most this many definitions in one `find_symbol` answer.
pub const MAX_DEFINITIONS: usize = 20;

/// One tool as an MCP `tools/list` entry describes it.
#[derive(Debug, Clone, Serialize)]
pub struct Tool {
    pub name: &'static str,
    pub description: &'static str,
    #[serde(rename = "inputSchema")]
    pub input_schema: Value,
}

/// Every tool, in the order the agent is shown them.
pub fn tools() -> Vec<Tool> {
    vec![
        Tool {
            name: ALREADY_EXISTS,
            description: "Before writing a function or class, ask whether the project already \
                has it. Give the code you are about to write and/or a description of what it \
                does. Answers the existing units it copies (exact, renamed, or near with a \
                similarity), the existing units its functions likely do again under another \
                form (read them before writing yours), \
                and the existing symbols whose names, signatures and docs match the \
                description, each with file:line, signature and usage count; or that nothing \
                like this exists.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "code": {
                        "type": "string",
                        "description": "The code you are about to write (one or more functions or classes)."
                    },
                    "description": {
                        "type": "string",
                        "description": "What the code does, in words."
                    },
                    "language": {
                        "type": "string",
                        "description": "The code's language, by name (`python`) or file extension (`py`); default: the language most of the project's files are in."
                    }
                },
                "additionalProperties": false
            }),
        },
        Tool {
            name: FIND_SYMBOL,
            description: "Find where a function or class is defined: give its name or part of \
                one (case and `_` ignored). Answers each definition with file:line, signature \
                and usage count.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "name": {
                        "type": "string",
                        "description": "A symbol's name or part of it."
                    }
                },
                "required": ["name"],
                "additionalProperties": false
            }),
        },
    ]
}

/// Why a call got no answer.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("unknown tool `{0}`: the engine's tools are `already_exists` and `find_symbol`")]
    Unknown(String),
    /// The input does not fit the tool's schema; says which field.
    #[error("{0}")]
    Input(String),
    #[error("the engine failed: {0:#}")]
    Engine(#[from] anyhow::Error),
}

/// Answers one call of tool `name` with `input` (a JSON object) on `index`.
pub fn call(index: &Index, name: &str, input: &Value) -> Result<Value, ToolError> {
    let input = input
        .as_object()
        .ok_or_else(|| ToolError::Input(format!("the input of `{name}` is not a JSON object")))?;
    let known: &[&str] = match name {
        ALREADY_EXISTS => &["code", "description", "language"],
        FIND_SYMBOL => &["name"],
        _ => return Err(ToolError::Unknown(name.to_string())),
    };
    if let Some(field) = input.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(ToolError::Input(format!(
            "`{name}` has no field `{field}`; its fields are `{}`",
            known.join("`, `")
        )));
    }
    let text = |field: &str| -> Result<Option<&str>, ToolError> {
        match input.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(_) => Err(ToolError::Input(format!(
                "field `{field}` of `{name}` is not a string"
            ))),
        }
    };
    let answer = match name {
        ALREADY_EXISTS => serde_json::to_value(already_exists(
            index,
            text("code")?,
            text("description")?,
            text("language")?,
        )?),
        _ => {
            let part = text("name")?
                .ok_or_else(|| ToolError::Input(format!("`{name}` needs the field `name`")))?;
            serde_json::to_value(find_symbol(index, part)?)
        }
    };
    answer.map_err(|e| ToolError::Engine(e.into()))
}

/// What `already_exists` answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Existing {
    pub copies: Vec<Copy>,
    /// Functions of the code that the project likely has under another form
    /// (the finder's decision: a look-alike sibling scores as high, so the
    /// agent is to read the unit, not trust it blindly; docs/reuse.md).
    pub same: Vec<Same>,
    /// The description's suggestions.
    pub symbols: Vec<Suggestion>,
    /// Said when every list is empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<&'static str>,
}

/// What the answer says when nothing was found.
pub const NOTHING: &str = "nothing like this exists in the project";

/// A function of the given code, and the existing unit that does the same.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Same {
    pub yours: String,
    pub your_line: usize,
    #[serde(flatten)]
    pub existing: Suggestion,
}

/// An existing unit that a unit of the given code copies.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Copy {
    /// `copy.exact`, `copy.renamed` or `copy.near`.
    pub kind: String,
    /// 1.0 for exact and renamed copies.
    pub similarity: f64,
    /// The unit of the given code, and its line there.
    pub yours: String,
    pub your_line: usize,
    /// The existing unit: project-relative file, 1-based line.
    pub file: String,
    pub line: usize,
    pub signature: String,
    pub usages: usize,
}

impl Copy {
    fn of(finding: Finding) -> Option<Copy> {
        let existing = finding.existing?;
        Some(Copy {
            kind: finding.rule,
            similarity: finding.similarity,
            yours: finding.new.name,
            your_line: finding.new.line,
            file: existing.file,
            line: existing.line,
            signature: existing.signature,
            usages: existing.usages,
        })
    }
}

pub fn already_exists(
    index: &Index,
    code: Option<&str>,
    description: Option<&str>,
    language: Option<&str>,
) -> Result<Existing, ToolError> {
    let code = code.filter(|c| !c.trim().is_empty());
    let description = description.filter(|d| !d.trim().is_empty());
    if code.is_none() && description.is_none() {
        return Err(ToolError::Input(format!(
            "`{ALREADY_EXISTS}` needs `code` or `description` (or both), not empty"
        )));
    }
    let (copies, same) = match code {
        Some(code) => {
            let path = query_path(index, language)?;
            let copies = match index.parse(&path, code)? {
                Some(parsed) => rules::copy_findings(index, &path, code, &parsed, &[])
                    .into_iter()
                    .filter_map(Copy::of)
                    .collect(),
                None => Vec::new(),
            };
            let same = reuse::find(index, &path, None, code)?
                .into_iter()
                .filter(|l| l.exists)
                .filter_map(|mut l| {
                    let best = l.candidates.drain(..).next()?;
                    Some(Same {
                        yours: l.name,
                        your_line: l.line,
                        existing: best.suggestion,
                    })
                })
                .collect();
            (copies, same)
        }
        None => (Vec::new(), Vec::new()),
    };
    let symbols = description.map_or_else(Vec::new, |d| suggest::suggest(index, d));
    let nothing = copies.is_empty() && same.is_empty() && symbols.is_empty();
    Ok(Existing {
        copies,
        same,
        symbols,
        note: nothing.then_some(NOTHING),
    })
}

/// A path no project file has, whose extension picks the code's language.
fn query_path(index: &Index, language: Option<&str>) -> Result<String, ToolError> {
    let lang = match language {
        Some(wanted) => {
            let wanted = wanted.trim().trim_start_matches('.').to_ascii_lowercase();
            lang::all()
                .iter()
                .find(|l| l.name() == wanted || l.spec.extensions.contains(&wanted.as_str()))
                .ok_or_else(|| {
                    let names: Vec<&str> = lang::all().iter().map(|l| l.name()).collect();
                    ToolError::Input(format!(
                        "field `language` of `{ALREADY_EXISTS}`: `{wanted}` is not one of {}",
                        names.join(", ")
                    ))
                })?
        }
        None => main_language(index).ok_or_else(|| {
            ToolError::Input(format!(
                "the project has no file in a language the engine knows: give `language` \
                 to `{ALREADY_EXISTS}`"
            ))
        })?,
    };
    let ext = lang.spec.extensions.first().copied().unwrap_or_default();
    Ok(format!("<{ALREADY_EXISTS}>.{ext}"))
}

/// The language most indexed files are in (ties: the first in the table).
fn main_language(index: &Index) -> Option<&'static lang::Lang> {
    let count = |l: &lang::Lang| {
        index
            .files()
            .filter(|(_, e)| e.language == l.name())
            .count()
    };
    lang::all()
        .iter()
        .map(|l| (count(l), l))
        .filter(|(n, _)| *n > 0)
        .min_by_key(|(n, _)| std::cmp::Reverse(*n))
        .map(|(_, l)| l)
}

/// What `find_symbol` answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Definitions {
    pub definitions: Vec<Definition>,
    /// Matching definitions left out after [`MAX_DEFINITIONS`].
    pub more: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Definition {
    pub name: String,
    /// `function` or `class`.
    pub kind: &'static str,
    pub signature: String,
    /// Project-relative file, 1-based line.
    pub file: String,
    pub line: usize,
    /// References to the name outside its definitions.
    pub usages: usize,
}

pub fn find_symbol(index: &Index, part: &str) -> Result<Definitions, ToolError> {
    let wanted = fold(part);
    if wanted.is_empty() {
        return Err(ToolError::Input(format!(
            "field `name` of `{FIND_SYMBOL}` holds no letter or digit"
        )));
    }
    let mut found: Vec<(Rank, &Unit)> = index
        .units()
        .map(|(_, u)| u)
        .filter(|u| u.data.kind.is_symbol() && !u.data.name.starts_with('<'))
        .filter_map(|u| {
            let name = fold(&u.data.name);
            let closeness = if u.data.name == part {
                0
            } else if name == wanted {
                1
            } else if name.starts_with(&wanted) {
                2
            } else if name.contains(&wanted) {
                3
            } else {
                return None;
            };
            let test = is_test_path(&u.file) || u.data.is_test();
            let usages = std::cmp::Reverse(index.usages(&u.data.name));
            Some(((closeness, test, usages), u))
        })
        .collect();
    found.sort_by(|(a, ua), (b, ub)| {
        a.cmp(b)
            .then_with(|| (&ua.file, ua.data.start_line).cmp(&(&ub.file, ub.data.start_line)))
    });
    let more = found.len().saturating_sub(MAX_DEFINITIONS);
    let definitions = found
        .into_iter()
        .take(MAX_DEFINITIONS)
        .map(|(_, u)| Definition {
            name: u.data.name.clone(),
            kind: if u.data.kind == UnitKind::Class {
                "class"
            } else {
                "function"
            },
            signature: u.data.signature.clone(),
            file: u.file.to_string(),
            line: u.data.start_line as usize,
            usages: index.usages(&u.data.name) as usize,
        })
        .collect();
    Ok(Definitions { definitions, more })
}

/// How a definition ranks: the name's closeness to the query (exact, exact but
/// for case and `_`, prefix, part), test code after the project's own, then the
/// most used.
type Rank = (u8, bool, std::cmp::Reverse<u32>);

/// Lower case without `_` and `-`: how names are compared.
fn fold(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RuleConfig;

    const MONEY: &str = "def parse_amount(text):\n    \"\"\"Parses an amount such as '12,50' into cents.\"\"\"\n    cleaned = text.strip().replace(' ', '')\n    if not cleaned:\n        raise ValueError('empty amount')\n    whole, _, frac = cleaned.replace(',', '.').partition('.')\n    frac = (frac + '00')[:2]\n    return int(whole) * 100 + int(frac)\n\n\ndef format_cents(cents):\n    return f'{cents // 100},{cents % 100:02d}'\n";

    fn index() -> Index {
        let mut index = Index::new(RuleConfig::default()).unwrap();
        index.update_file("app/money.py", MONEY).unwrap();
        index
            .update_file(
                "app/report.py",
                "from app.money import parse_amount\n\ndef total(lines):\n    return sum(parse_amount(l) for l in lines)\n",
            )
            .unwrap();
        index
            .update_file(
                "tests/test_money.py",
                "def test_parse_amount():\n    assert parse_amount('1,5') == 150\n",
            )
            .unwrap();
        index
    }

    #[test]
    fn a_copied_function_comes_back_with_its_file_and_line() {
        let index = index();
        let renamed = MONEY
            .replace("parse_amount", "amount_to_cents")
            .replace("cleaned", "s");
        let answer = call(&index, ALREADY_EXISTS, &json!({"code": renamed})).unwrap();
        let copy = &answer["copies"][0];
        assert_eq!(copy["kind"], "copy.renamed", "{answer}");
        assert_eq!(copy["yours"], "amount_to_cents");
        assert_eq!(
            (copy["file"].as_str(), copy["line"].as_u64()),
            (Some("app/money.py"), Some(1))
        );
        assert_eq!(copy["signature"], "def parse_amount(text)");
        assert_eq!(copy["usages"], 3);
        let exact = call(
            &index,
            ALREADY_EXISTS,
            &json!({"code": MONEY, "language": "py"}),
        )
        .unwrap();
        assert_eq!(exact["copies"][0]["kind"], "copy.exact", "{exact}");
    }

    #[test]
    fn a_description_finds_symbols_by_their_words_and_unrelated_words_find_none() {
        let index = index();
        let found = already_exists(&index, None, Some("parse an amount into cents"), None).unwrap();
        assert!(found.copies.is_empty());
        assert_eq!(
            found.symbols.first().map(|s| s.name.as_str()),
            Some("parse_amount"),
            "{found:?}"
        );
        assert_eq!(found.symbols[0].file, "app/money.py");
        let nothing = already_exists(&index, None, Some("render a zeppelin"), None).unwrap();
        assert!(nothing.symbols.is_empty(), "{nothing:?}");
        assert_eq!(nothing.note, Some(NOTHING));
        assert_eq!(found.note, None);
    }

    #[test]
    fn new_code_with_nothing_like_it_is_answered_nothing() {
        let index = index();
        suggest::prepare(&index);
        let code = "def to_roman(n):\n    out = ''\n    for value, letters in [(10, 'X'), (5, 'V'), (1, 'I')]:\n        while n >= value:\n            out += letters\n            n -= value\n    return out\n";
        let answer = already_exists(&index, Some(code), None, None).unwrap();
        assert!(
            answer.copies.is_empty() && answer.same.is_empty(),
            "{answer:?}"
        );
        assert!(answer.symbols.is_empty(), "{answer:?}");
        assert_eq!(answer.note, Some(NOTHING));
    }

    #[test]
    fn find_symbol_matches_parts_of_names_exact_first_tests_last() {
        let index = index();
        let answer = find_symbol(&index, "parseAmount").unwrap();
        let names: Vec<(&str, &str)> = answer
            .definitions
            .iter()
            .map(|d| (d.name.as_str(), d.file.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("parse_amount", "app/money.py"),
                ("test_parse_amount", "tests/test_money.py")
            ]
        );
        assert_eq!(answer.definitions[0].line, 1);
        assert_eq!(answer.definitions[0].usages, 3);
        assert_eq!(answer.definitions[0].kind, "function");
        let part = find_symbol(&index, "cent").unwrap();
        assert_eq!(part.definitions[0].name, "format_cents");
        assert!(
            find_symbol(&index, "zeppelin")
                .unwrap()
                .definitions
                .is_empty()
        );
    }

    #[test]
    fn the_list_has_both_tools_with_object_schemas() {
        let tools = tools();
        let names: Vec<&str> = tools.iter().map(|t| t.name).collect();
        assert_eq!(names, [ALREADY_EXISTS, FIND_SYMBOL]);
        for tool in &tools {
            assert_eq!(tool.input_schema["type"], "object");
            let listed = serde_json::to_value(tool).unwrap();
            assert!(listed["inputSchema"]["properties"].is_object(), "{listed}");
        }
    }

    #[test]
    fn the_canon_names_the_tools_only_where_they_are_served() {
        let with = crate::canon(true);
        for tool in tools() {
            let seen = format!("`mcp__{}__{}`", crate::mcp::SERVER_NAME, tool.name);
            assert!(with.contains(&seen), "{seen}");
        }
        let without = crate::canon(false);
        assert!(with.starts_with(&without) && with.len() > without.len());
        assert!(!without.contains("mcp__") && !without.contains(ALREADY_EXISTS));
    }

    #[test]
    fn bad_calls_are_errors_naming_the_tool_and_field() {
        let index = index();
        let err = |name: &str, input: Value| call(&index, name, &input).unwrap_err().to_string();
        assert!(err("grep", json!({})).contains("unknown tool `grep`"));
        assert!(err(FIND_SYMBOL, json!({})).contains("needs the field `name`"));
        assert!(
            err(FIND_SYMBOL, json!({"name": 3}))
                .contains("field `name` of `find_symbol` is not a string")
        );
        assert!(err(FIND_SYMBOL, json!({"name": "__"})).contains("no letter"));
        assert!(err(FIND_SYMBOL, json!({"nam": "x"})).contains("has no field `nam`"));
        assert!(err(FIND_SYMBOL, json!("x")).contains("not a JSON object"));
        assert!(
            err(ALREADY_EXISTS, json!({"code": " "})).contains("needs `code` or `description`")
        );
        assert!(
            err(
                ALREADY_EXISTS,
                json!({"code": "x = 1", "language": "cobol"})
            )
            .contains("`cobol` is not one of")
        );
        let empty = Index::new(RuleConfig::default()).unwrap();
        let e = call(&empty, ALREADY_EXISTS, &json!({"code": "x = 1"})).unwrap_err();
        assert!(e.to_string().contains("give `language`"), "{e}");
        assert!(matches!(
            call(&empty, "x", &json!({})),
            Err(ToolError::Unknown(_))
        ));
    }
}
