//! The ranking step over the two retrievals when the model ranks
//! (docs/suggestions.md, "The ranking step"): the words' ranking and the
//! cosines' ranking fused by reciprocal rank (each name scores 1 / (K + rank) in
//! each; ranks compare across prompts where raw scores do not), then lifts: for
//! the unit defining a symbol the prompt names ([`definition`]), for a file whose
//! name holds the prompt's words and for a file where several candidates score
//! ([`files`]). Each part can be left out ([`Steps`]) to measure what it adds.

use rustc_hash::FxHashMap;

use super::definition::Named;
use super::files::{COHERENCE_POOL, FileWords, coherence};
use super::{Ranked, blended, score_order, suggestion};
use crate::index::{Index, Unit};
use crate::units::{UnitKind, foreign_exports};

/// Reciprocal rank fusion's constant: how flat the reward for rank is.
const RRF_K: f64 = 60.0;
/// Only this many of the best fused names get a file name's lift: a file's
/// name vouches for a candidate that scores, not for every unit in the file.
const NAME_POOL: usize = 100;

/// The parts of the ranking step applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Steps {
    /// Reciprocal rank fusion (else coverage plus the cosine's share).
    pub fusion: bool,
    pub definition: bool,
    pub file_name: bool,
    pub coherence: bool,
}

impl Steps {
    pub const ALL: Steps = Steps {
        fusion: true,
        definition: true,
        file_name: true,
        coherence: true,
    };
    /// None of the parts: coverage plus the cosine's share.
    pub const NONE: Steps = Steps {
        fusion: false,
        definition: false,
        file_name: false,
        coherence: false,
    };
    /// What the engine's suggestions rank with: the parts that help semble's
    /// benchmark and cost the case files' held-out prompts nothing
    /// (docs/suggestions.md, "The ranking step"). A request in a user's words
    /// seldom names an identifier, so the definition lift is idle there.
    pub const SHIPPED: Steps = Steps {
        definition: true,
        ..Steps::NONE
    };
    /// The parts' names, as `without` reads them.
    pub const NAMES: [&'static str; 4] = ["fusion", "definition", "file-name", "coherence"];

    /// These steps without the named parts.
    pub fn without(self, names: &[String]) -> anyhow::Result<Steps> {
        self.set(names, false)
    }

    /// These steps and the named parts (`none` names no part).
    pub fn with(self, names: &[String]) -> anyhow::Result<Steps> {
        self.set(names, true)
    }

    /// The named parts alone, or the shipped ones when none are named: what an
    /// evaluation's `--steps` option chooses.
    pub fn named_or_shipped(names: Option<&[String]>) -> anyhow::Result<Steps> {
        names.map_or(Ok(Steps::SHIPPED), |names| Steps::NONE.with(names))
    }

    fn set(mut self, names: &[String], on: bool) -> anyhow::Result<Steps> {
        for n in names {
            match n.as_str() {
                "fusion" => self.fusion = on,
                "definition" => self.definition = on,
                "file-name" => self.file_name = on,
                "coherence" => self.coherence = on,
                "none" => {}
                _ => anyhow::bail!("no ranking step `{n}` (one of {:?})", Self::NAMES),
            }
        }
        Ok(self)
    }
}

/// A name's place in the ranking: its lexical item, or the candidate nearest
/// the prompt when it has none.
struct Entry<'a> {
    name: &'a str,
    file: &'a str,
    line: usize,
    lexical: Option<usize>,
    unit: usize,
    cos: f64,
    score: f64,
}

/// The best `depth` items, one per name: `items` are the lexical items, best
/// first, one per name; `cos` each candidate's cosine to the prompt.
pub(super) fn rank(
    index: &Index,
    items: Vec<Ranked>,
    candidates: &[&Unit],
    cos: &[f64],
    prompt: &str,
    depth: usize,
    steps: Steps,
) -> Vec<Ranked> {
    let mut nearest: FxHashMap<&str, (usize, f64)> = FxHashMap::default();
    for (i, (u, &c)) in candidates.iter().zip(cos).enumerate() {
        let e = nearest.entry(u.data.name.as_str()).or_insert((i, c));
        if c > e.1 {
            *e = (i, c);
        }
    }
    let mut entries: Vec<Entry> = Vec::with_capacity(nearest.len());
    for (l, r) in items.iter().enumerate() {
        let (unit, cos) = nearest
            .remove(r.suggestion.name.as_str())
            .unwrap_or((usize::MAX, 0.0));
        entries.push(Entry {
            name: &r.suggestion.name,
            file: &r.suggestion.file,
            line: r.suggestion.line,
            lexical: Some(l),
            unit,
            cos,
            score: blended(r.coverage, Some(cos)),
        });
    }
    for (name, (i, cos)) in nearest {
        let u = candidates[i];
        entries.push(Entry {
            name,
            file: &u.file,
            line: u.data.start_line as usize,
            lexical: None,
            unit: i,
            cos,
            score: blended(0.0, Some(cos)),
        });
    }
    let named = Named::of(prompt);
    if steps.definition {
        add_namesakes(&mut entries, index, candidates, cos, &named);
    }
    if steps.fusion {
        fuse(&mut entries);
    }
    entries.sort_by(|a, b| score_order(place(a), place(b)));
    let best = entries.first().map_or(0.0, |e| e.score);
    let mut file_words = FileWords::of(prompt);
    for (i, e) in entries.iter_mut().enumerate() {
        let mut lift = 0.0;
        if steps.definition {
            lift += candidates
                .get(e.unit)
                .map_or_else(|| named.lift(e.name, e.file), |u| defines(index, &named, u));
        }
        if steps.file_name && !named.whole() && i < NAME_POOL {
            lift += file_words.lift(e.file);
        }
        e.score += best * lift;
    }
    entries.sort_by(|a, b| score_order(place(a), place(b)));
    if steps.coherence {
        let pool: Vec<(&str, f64)> = entries
            .iter()
            .take(COHERENCE_POOL)
            .map(|e| (e.file, e.score))
            .collect();
        for (e, lift) in entries.iter_mut().zip(coherence(&pool)) {
            e.score += lift;
        }
        entries.sort_by(|a, b| score_order(place(a), place(b)));
    }
    let chosen: Vec<(Option<usize>, usize, f64, f64)> = entries
        .iter()
        .take(depth)
        .map(|e| (e.lexical, e.unit, e.score, e.cos))
        .collect();
    drop(entries);
    let mut items: Vec<Option<Ranked>> = items.into_iter().map(Some).collect();
    chosen
        .into_iter()
        .map(|(lexical, unit, score, cos)| {
            let mut r = match lexical.and_then(|l| items[l].take()) {
                Some(r) => r,
                None => Ranked {
                    suggestion: suggestion(index, candidates[unit], 0.0),
                    coverage: 0.0,
                    matches: Vec::new(),
                    cosine: None,
                },
            };
            r.suggestion.score = score;
            r.cosine = Some(cos);
            r
        })
        .collect()
}

/// Every definition of a name the prompt asks for gets its entry: one item per
/// name keeps overloads out of a list, but a name the prompt asks for may be
/// defined in several files (`ZodType` in zod's v3 and v4), and which one is
/// meant is for the ranking to say.
fn add_namesakes<'a>(
    entries: &mut Vec<Entry<'a>>,
    index: &Index,
    candidates: &[&'a Unit],
    cos: &[f64],
    named: &Named,
) {
    let held: rustc_hash::FxHashSet<(&str, usize)> =
        entries.iter().map(|e| (e.file, e.line)).collect();
    for (i, u) in candidates.iter().enumerate() {
        let (file, line): (&str, usize) = (&u.file, u.data.start_line as usize);
        if defines(index, named, u) > 0.0 && !held.contains(&(file, line)) {
            entries.push(Entry {
                name: &u.data.name,
                file,
                line,
                lexical: None,
                unit: i,
                cos: cos[i],
                score: blended(0.0, Some(cos[i])),
            });
        }
    }
}

/// The definition lift of `unit`: for naming what the prompt asks for, or for
/// a module, for re-exporting it from a dependency when the project defines
/// it nowhere.
pub(super) fn defines(index: &Index, named: &Named, unit: &Unit) -> f64 {
    if unit.data.kind == UnitKind::Module {
        let exports = foreign_exports(&unit.data.signature);
        named.lift_export(exports, |name| index.definitions(name).next().is_some())
    } else {
        named.lift(&unit.data.name, &unit.file)
    }
}

fn place<'e>(e: &Entry<'e>) -> (f64, &'e str, usize) {
    (e.score, e.file, e.line)
}

/// Each entry's score becomes its reciprocal ranks' sum: by the words (a name
/// without a lexical item has no word rank) and by the cosine.
fn fuse(entries: &mut [Entry]) {
    let mut by_cos: Vec<usize> = (0..entries.len()).collect();
    by_cos.sort_by(|&a, &b| {
        let (a, b) = (&entries[a], &entries[b]);
        score_order((a.cos, a.file, a.line), (b.cos, b.file, b.line))
    });
    let mut vector_rank = vec![0; entries.len()];
    for (rank, &i) in by_cos.iter().enumerate() {
        vector_rank[i] = rank;
    }
    for (e, v) in entries.iter_mut().zip(vector_rank) {
        let words = e.lexical.map_or(0.0, |l| 1.0 / (RRF_K + 1.0 + l as f64));
        e.score = words + 1.0 / (RRF_K + 1.0 + v as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Engine;
    use crate::config::RuleConfig;

    const NONE: Steps = Steps::NONE;

    fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, Engine) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let engine = Engine::open(dir.path(), RuleConfig::default()).unwrap();
        (dir, engine)
    }

    /// The names as the step ranks them, with these cosines (0 for the rest).
    fn order(engine: &Engine, prompt: &str, cosines: &[(&str, f64)], steps: Steps) -> Vec<String> {
        let index = engine.index();
        let candidates = super::super::candidates(index);
        let mut items: Vec<Ranked> = super::super::lexical(index, &candidates, prompt)
            .into_iter()
            .flatten()
            .collect();
        items.sort_by(super::super::best_first);
        let cos: Vec<f64> = candidates
            .iter()
            .map(|u| {
                cosines
                    .iter()
                    .find(|(n, _)| *n == u.data.name)
                    .map_or(0.0, |c| c.1)
            })
            .collect();
        rank(index, items, &candidates, &cos, prompt, 10, steps)
            .into_iter()
            .map(|r| r.suggestion.name)
            .collect()
    }

    fn before(order: &[String], a: &str, b: &str) -> bool {
        let at = |n: &str| order.iter().position(|o| o == n).unwrap();
        at(a) < at(b)
    }

    #[test]
    fn steps_are_chosen_by_name() {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let definition = Steps {
            definition: true,
            ..NONE
        };
        assert_eq!(NONE.with(&names(&["definition"])).unwrap(), definition);
        assert_eq!(NONE.with(&names(&["none"])).unwrap(), NONE);
        assert_eq!(
            Steps::ALL
                .without(&names(&["fusion", "file-name", "coherence"]))
                .unwrap(),
            definition
        );
        assert!(NONE.with(&names(&["rerank"])).is_err());
    }

    #[test]
    fn fusion_puts_a_name_both_rankings_place_well_over_one_only_the_words_place_first() {
        let (_d, engine) = project(&[(
            "a.py",
            "def parse_amount(text):\n    \"\"\"Parses an amount of money written with a comma.\"\"\"\n    return text\n\ndef read_total(rows):\n    \"\"\"Money total of the rows, amount by amount.\"\"\"\n    return rows\n\ndef unrelated(x):\n    \"\"\"Something else entirely.\"\"\"\n    return x\n",
        )]);
        let cos = [
            ("read_total", 0.2),
            ("unrelated", 0.15),
            ("parse_amount", 0.0),
        ];
        let prompt = "parse money amount";
        let fused = order(
            &engine,
            prompt,
            &cos,
            Steps {
                fusion: true,
                ..NONE
            },
        );
        let summed = order(&engine, prompt, &cos, NONE);
        assert!(before(&fused, "read_total", "parse_amount"), "{fused:?}");
        assert!(before(&summed, "parse_amount", "read_total"), "{summed:?}");
    }

    #[test]
    fn the_unit_defining_the_symbol_a_prompt_names_comes_first() {
        let (_d, engine) = project(&[
            (
                "cache.py",
                "class TokenCache:\n    \"\"\"Keeps tokens.\"\"\"\n    pass\n",
            ),
            (
                "store.py",
                "def token_cache_size(c):\n    \"\"\"Size of the token cache, in token cache entries.\"\"\"\n    return c\n\ndef evict(c):\n    \"\"\"Drops the oldest entry.\"\"\"\n    return c\n",
            ),
        ]);
        let cos = [
            ("token_cache_size", 0.5),
            ("evict", 0.3),
            ("TokenCache", 0.1),
        ];
        let fused = Steps {
            fusion: true,
            ..NONE
        };
        let without = order(&engine, "TokenCache", &cos, fused);
        let with = order(
            &engine,
            "TokenCache",
            &cos,
            Steps {
                definition: true,
                ..fused
            },
        );
        assert_ne!(without[0], "TokenCache", "{without:?}");
        assert_eq!(with[0], "TokenCache", "{with:?}");
    }

    #[test]
    fn a_module_re_exporting_a_dependencys_symbol_the_prompt_names_comes_first() {
        let body = "/// Runs the extractor on the request parts.\npub fn from_request_parts(req: u8) -> u8 {\n    req\n}\n";
        let files = |reexport: &'static str| {
            [
                ("src/extract/mod.rs", reexport),
                ("src/extract/parts.rs", body),
            ]
        };
        let steps = Steps {
            definition: true,
            ..NONE
        };
        let cos = [("from_request_parts", 0.4)];
        // Re-exported from a dependency, defined nowhere in the project: found
        // where the project exports it.
        let (_d, engine) = project(&files(
            "//! Extractors.\npub use axum_core::extract::{FromRequest, FromRequestParts};\n",
        ));
        let with = order(&engine, "FromRequest", &cos, steps);
        assert_eq!(with[0], "src/extract/mod.rs", "{with:?}");
        let without = order(&engine, "FromRequest", &cos, NONE);
        assert_eq!(without[0], "from_request_parts", "{without:?}");
        // Re-exported from the project's own module: its definition is the
        // project's, so the module gets no lift.
        let (_d, engine) = project(&files(
            "//! Extractors.\npub use crate::core::{FromRequest, FromRequestParts};\n",
        ));
        let own = order(&engine, "FromRequest", &cos, steps);
        assert_eq!(own[0], "from_request_parts", "{own:?}");
    }

    #[test]
    fn a_file_named_by_the_prompts_words_lifts_its_candidate() {
        let (_d, engine) = project(&[
            (
                "jar/cookies.py",
                "def load(path):\n    \"\"\"Reads the entries saved to disk.\"\"\"\n    return path\n",
            ),
            (
                "http/models.py",
                "def send(request):\n    \"\"\"Sends a request with its cookie header.\"\"\"\n    return request\n",
            ),
        ]);
        let cos = [("send", 0.4), ("load", 0.3)];
        let fused = Steps {
            fusion: true,
            ..NONE
        };
        let without = order(&engine, "cookie jar", &cos, fused);
        let with = order(
            &engine,
            "cookie jar",
            &cos,
            Steps {
                file_name: true,
                ..fused
            },
        );
        assert_eq!(without[0], "send", "{without:?}");
        assert_eq!(with[0], "load", "{with:?}");
    }

    #[test]
    fn a_file_where_several_candidates_score_lifts_its_best_over_a_lone_match() {
        let (_d, engine) = project(&[
            (
                "a.py",
                "def retry(f):\n    \"\"\"Retries with backoff.\"\"\"\n    return f\n\ndef retry_later(f):\n    \"\"\"Retry after a delay.\"\"\"\n    return f\n\ndef schedule_retry(f):\n    \"\"\"Schedules a retry.\"\"\"\n    return f\n",
            ),
            (
                "b.py",
                "def backoff_delay(n):\n    \"\"\"Retry backoff delay.\"\"\"\n    return n\n",
            ),
        ]);
        let cos = [
            ("backoff_delay", 0.9),
            ("retry", 0.8),
            ("retry_later", 0.7),
            ("schedule_retry", 0.6),
        ];
        let prompt = "retry backoff delay";
        let fused = Steps {
            fusion: true,
            ..NONE
        };
        let without = order(&engine, prompt, &cos, fused);
        let with = order(
            &engine,
            prompt,
            &cos,
            Steps {
                coherence: true,
                ..fused
            },
        );
        assert_eq!(without[0], "backoff_delay", "{without:?}");
        assert_ne!(with[0], "backoff_delay", "{with:?}");
    }
}
