//! The suggestions' contextual model (`sens_engine::suggest::model`) against the
//! same models in numpy (`scripts/model_reference.py`, which wrote
//! `fixtures/minilm-reference.json` and `fixtures/mpnet-reference.json`). Needs
//! `.tools/minilm/` and `.tools/mpnet/`, which `scripts/setup.sh` installs.

use std::path::PathBuf;

use sens_engine::Engine;
use sens_engine::cache::IndexCache;
use sens_engine::config::RuleConfig;
use sens_engine::judge::Judge;
use sens_engine::suggest::model::{MODEL_DIR, Model, cosine};
use sens_engine::suggest::{self, Ranking};

fn model() -> Model {
    model_in(MODEL_DIR)
}

fn model_in(folder: &str) -> Model {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../.tools")
        .join(folder);
    Model::load(&dir).unwrap_or_else(|e| panic!("{e:#} (scripts/setup.sh installs the model)"))
}

#[derive(serde::Deserialize)]
struct Reference {
    text: String,
    ids: Vec<u32>,
    vector: Vec<f32>,
}

fn references() -> Vec<Reference> {
    serde_json::from_str(include_str!("fixtures/minilm-reference.json")).unwrap()
}

fn mpnet_references() -> Vec<Reference> {
    serde_json::from_str(include_str!("fixtures/mpnet-reference.json")).unwrap()
}

/// The largest difference between two vectors, element by element.
fn largest_difference(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0f32, f32::max)
}

/// Each text's vector embedded with others is the one it gets alone, to 1e-6.
fn assert_each_as_alone(model: &Model, texts: &[&str], together: &[Vec<f32>]) {
    for (text, v) in texts.iter().zip(together) {
        let worst = largest_difference(v, &model.embed(text, 512));
        assert!(worst < 1e-6, "{text}: off by {worst}");
    }
}

/// Each reference's word pieces and vector (to 1e-4); the vectors.
fn assert_matches(model: &Model, references: &[Reference]) -> Vec<Vec<f32>> {
    let mut vectors = Vec::new();
    for r in references {
        assert_eq!(
            model.tokens(&r.text, 512),
            r.ids[1..r.ids.len() - 1],
            "{}",
            r.text
        );
        let v = model.embed(&r.text, 512);
        assert_eq!(v.len(), r.vector.len());
        let worst = largest_difference(&v, &r.vector);
        assert!(worst < 1e-4, "{}: off by {worst}", r.text);
        vectors.push(v);
    }
    vectors
}

#[test]
fn the_forward_pass_matches_numpy_to_1e_4() {
    let vectors = assert_matches(&model(), &references());
    // The model's published example: the two paraphrases at 0.755.
    assert!((cosine(&vectors[0], &vectors[1]) - 0.755).abs() < 1e-3);
}

/// MPNet: positions from 2, no token types, and relative-position buckets
/// (the last sentence is long enough for the logarithmic ones).
#[test]
fn the_mpnet_forward_pass_matches_numpy_to_1e_4() {
    let model = model_in("mpnet");
    let references = mpnet_references();
    assert!(references.iter().any(|r| r.ids.len() > 32));
    assert_matches(&model, &references);
    let texts: Vec<&str> = references.iter().map(|r| r.text.as_str()).collect();
    assert_each_as_alone(&model, &texts, &model.embed_all(&texts, 512));
}

#[test]
fn texts_embedded_together_get_the_vectors_each_gets_alone() {
    let model = model();
    let references = references();
    // Of different lengths, so that each sequence's rows sit at another offset.
    let texts: Vec<&str> = references.iter().map(|r| r.text.as_str()).collect();
    let together = model.embed_all(&texts, 512);
    assert_eq!(together.len(), texts.len());
    assert_each_as_alone(&model, &texts, &together);
    assert!(model.embed_all(&[], 512).is_empty());
}

#[test]
fn products_spread_over_the_cores_give_the_vectors_of_one_core() {
    let model = model();
    let references = references();
    // Alone, each text is too short to be spread; together, enough rows for
    // every core (the engine spreads from 64 rows on two cores, 32 a core).
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let rows: usize = references.iter().map(|r| r.ids.len()).sum();
    let copies = (32 * cores.max(2)).div_ceil(rows) + 1;
    let texts: Vec<&str> = (0..copies)
        .flat_map(|_| references.iter().map(|r| r.text.as_str()))
        .collect();
    let together = model.embed_all(&texts, 512);
    assert_each_as_alone(&model, &texts, &together);
}

#[test]
fn a_missing_or_corrupt_model_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let err = format!("{:#}", Model::load(dir.path()).unwrap_err());
    assert!(err.contains("model.safetensors"), "{err}");
    for (name, bytes) in [
        ("short", vec![1, 2, 3]),
        (
            "header past the end",
            [&100u64.to_le_bytes()[..], b"{}"].concat(),
        ),
        ("no tensors", [&2u64.to_le_bytes()[..], b"{}"].concat()),
    ] {
        std::fs::write(dir.path().join("model.safetensors"), bytes).unwrap();
        let err = format!("{:#}", Model::load(dir.path()).unwrap_err());
        assert!(err.contains("model.safetensors"), "{name}: {err}");
    }
    // Sound weights, then a missing tokenizer, then one without the tokens
    // that open and close a sequence.
    let weights = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../.tools")
        .join(MODEL_DIR)
        .join("model.safetensors");
    std::fs::copy(weights, dir.path().join("model.safetensors")).unwrap();
    let err = format!("{:#}", Model::load(dir.path()).unwrap_err());
    assert!(err.contains("tokenizer.json"), "{err}");
    std::fs::write(
        dir.path().join("tokenizer.json"),
        r#"{"model": {"vocab": {"<s>": 0, "</s>": 1, "[UNK]": 2}}}"#,
    )
    .unwrap();
    let err = format!("{:#}", Model::load(dir.path()).unwrap_err());
    assert!(
        err.contains("tokenizer.json") && err.contains("[CLS]"),
        "{err}"
    );
}

/// A helper sharing no word with the prompt (`chunked` for `pieces of 500
/// items`), next to one the words find.
#[test]
fn the_model_suggests_a_helper_the_words_miss_and_stays_silent_on_nothing_relevant() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("helpers.py"),
        r#"def chunked(iterable, n):
    """Break *iterable* into lists of length *n*; the last list may be shorter."""
    out = []
    for item in iterable:
        out.append(item)
        if len(out) == n:
            yield out
            out = []
    if out:
        yield out


def send_order(order, client):
    """Post one order to the shop's API."""
    return client.post("/orders", json=order)
"#,
    )
    .unwrap();
    let engine = Engine::open(dir.path(), RuleConfig::default()).unwrap();
    let index = engine.index();
    let prompt = "send the orders to the shop in pieces of 500 items";
    let names = |r: &Ranking| -> Vec<String> {
        r.items.iter().map(|i| i.suggestion.name.clone()).collect()
    };
    let words = suggest::rank_with(index, prompt, None);
    assert_eq!(names(&words), ["send_order"]);
    // Until every candidate has its vector the words rank alone.
    assert!(suggest::rank(index, prompt).model.is_none());
    assert_eq!(suggest::prepare(index), 2);
    let both = suggest::rank(index, prompt);
    assert!(
        !both.silent && names(&both).contains(&"chunked".to_string()),
        "{:?}",
        names(&both)
    );
    let poem = suggest::rank(index, "Write a poem about autumn leaves");
    assert!(poem.model.is_some_and(|m| !m.vouches()) && poem.silent);
}

/// An engine on a project of one file, with an on-disk cache folder (the
/// project's and the cache's folders are returned to keep them alive).
fn cached_engine(name: &str, text: &str) -> (tempfile::TempDir, tempfile::TempDir, Engine) {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join(name), text).unwrap();
    let store = tempfile::tempdir().unwrap();
    let cfg = RuleConfig::default();
    let cache = IndexCache::open(store.path(), &cfg).unwrap();
    let engine = Engine::open_with_cache(project.path(), cfg, Some(&cache)).unwrap();
    (project, store, engine)
}

/// The vectors file in a cache folder, if any.
fn vectors_file(store: &std::path::Path) -> Option<PathBuf> {
    std::fs::read_dir(store)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "vec"))
}

/// Vectors made by an engine with an on-disk cache are there for the next one
/// (another process: here a second model, whose memory holds none).
#[test]
fn a_background_pass_keeps_the_vectors_in_the_engines_cache_folder() {
    let (_project, store, engine) = cached_engine(
        "dates.py",
        "def parse_iso_day(text):\n    \"\"\"Read a day written as 2024-01-31.\"\"\"\n    return text.split('-')\n",
    );
    engine.suggest("read the day the user typed").unwrap();
    let file = || vectors_file(store.path());
    // The pass runs on its own thread: wait for its file (renamed into place
    // whole), or fail after two minutes.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while file().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "no vectors file in the cache folder"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let unit = engine
        .index()
        .units()
        .map(|(_, u)| u)
        .find(|u| u.data.name == "parse_iso_day")
        .unwrap();
    let fresh = model();
    assert!(fresh.cached(unit).is_none());
    fresh.read_store(store.path());
    let kept = fresh.cached(unit).expect("the kept vector");
    let made = fresh.embed(&suggest::model::symbol_text(unit), 126);
    assert!(cosine(&kept, &made) > 0.9999);
    // A corrupt file holds nothing and breaks nothing.
    std::fs::write(file().unwrap(), b"SENSMLV1 garbage").unwrap();
    let other = model();
    other.read_store(store.path());
    assert!(other.cached(unit).is_none());
}

/// A benchmark run's engine makes every vector before its agent starts, into
/// its cache folder at once: its first suggestion already ranks with the model.
#[test]
fn an_engine_prepared_before_its_first_prompt_ranks_with_the_model_at_once() {
    let (_project, store, engine) = cached_engine(
        "money.py",
        "def cents_to_text(cents):\n    \"\"\"Show an amount of cents as euros, like 12.50.\"\"\"\n    return f'{cents // 100}.{cents % 100:02d}'\n\n\ndef sum_cents(amounts):\n    \"\"\"Add up amounts given in cents.\"\"\"\n    return sum(amounts)\n",
    );
    assert_eq!(engine.prepare_suggestions().unwrap(), 2);
    assert!(
        vectors_file(store.path()).is_some(),
        "no vectors file in the cache folder"
    );
    let first = suggest::rank(engine.index(), "print the price of the basket in euros");
    assert!(first.model.is_some(), "the first ranking is by words alone");
    assert_eq!(engine.prepare_suggestions().unwrap(), 0);
}

/// Names with no lexical item rank by their cosine alone, and only the best of
/// them become items: the list is what ranking every candidate would give.
#[test]
fn names_the_words_miss_are_listed_by_their_cosine_best_first() {
    let docs = [
        "Returns the area of a circle of the given radius.",
        "Converts a colour from red, green and blue to hue.",
        "Counts the days between two calendar dates.",
        "Opens the settings file and reads its options.",
        "Sends an email message to every subscriber.",
        "Sorts the players by their score, highest first.",
        "Draws a bar chart of the monthly sales.",
        "Compresses a folder into a zip archive.",
        "Parses a time of day such as 12:30 into minutes.",
        "Rounds a price to the nearest cent.",
        "Checks that a password is long enough.",
        "Translates a greeting into French.",
    ];
    let text: String = docs
        .iter()
        .enumerate()
        .map(|(i, doc)| format!("def helper_{i}(x):\n    \"\"\"{doc}\"\"\"\n    return x\n\n\n"))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("helpers.py"), text).unwrap();
    let engine = Engine::open(dir.path(), RuleConfig::default()).unwrap();
    let index = engine.index();
    let model = model();
    let units: Vec<_> = index
        .units()
        .map(|(_, u)| u)
        .filter(|u| u.data.name.starts_with("helper_"))
        .collect();
    assert_eq!(units.len(), docs.len());
    model.prepare(&units);
    let prompt = "how much money did we make on lunchboxes in spring";
    let ranking = suggest::rank_with(index, prompt, Some(&model));
    assert!(ranking.items.iter().all(|i| i.matches.is_empty()));
    // Every candidate's score as an item would have it, highest first, ties in
    // line order.
    let p = model.embed_prompt(prompt);
    let mut expected: Vec<(f64, u32, String)> = units
        .iter()
        .map(|u| {
            let score = suggest::blended(0.0, Some(cosine(&model.cached(u).unwrap(), &p)));
            (score, u.data.start_line, u.data.name.clone())
        })
        .collect();
    expected.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let expected: Vec<String> = expected.into_iter().take(8).map(|e| e.2).collect();
    let listed: Vec<String> = ranking
        .items
        .iter()
        .map(|i| i.suggestion.name.clone())
        .collect();
    assert_eq!(listed, expected);
}

/// A prompt's products in 8 bits (on a CPU with the kernel) move its vector
/// little: the same direction as the full-precision one to a cosine of 0.99,
/// on short sentences and on a task's long prompt.
#[test]
fn a_prompt_in_8_bits_points_where_its_full_precision_vector_does() {
    let model = model();
    let long = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../bench/tasks/py-confirm-words/prompt.md"),
    )
    .unwrap();
    let mut texts: Vec<String> = references().into_iter().map(|r| r.text).collect();
    texts.push(long);
    for text in &texts {
        let full = model.embed(text, 254);
        let quick = model.embed_prompt(text);
        let c = cosine(&full, &quick);
        assert!(c > 0.99, "cosine {c} for {text:?}");
    }
}
