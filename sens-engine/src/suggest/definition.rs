//! The lift for the unit that defines a symbol the prompt names. A prompt that
//! is one identifier (`HTTPAdapter`, `createStore`, `distill`) asks for its
//! definition; an identifier written as code inside a sentence (`ZodType`,
//! `safeParse`, `model_post_init`) points at it, less surely. Names are matched
//! exactly: a plain word of a sentence (`session`, `background`) is a request's
//! word, not a name.

/// Added to a defining unit's score, in units of the best score, when the
/// whole prompt is the name.
const WHOLE: f64 = 3.0;
/// The same when the name is written inside a sentence.
const EMBEDDED: f64 = 1.5;
/// Times this when the file is named after the symbol (`tokenizer.py` for
/// `Tokenizer`): the symbol's home, not a re-export or a namesake.
const HOME: f64 = 1.5;

/// The names a prompt asks for, and whether the prompt is just one of them.
pub struct Named<'p> {
    names: Vec<&'p str>,
    whole: bool,
}

impl<'p> Named<'p> {
    pub fn of(prompt: &'p str) -> Self {
        let tokens: Vec<&str> = prompt
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':' || c == '.'))
            .map(|t| t.trim_matches(|c| c == ':' || c == '.'))
            .filter(|t| !t.is_empty())
            .collect();
        // A qualified name (`Sinatra::Base`, `z.object`) names its last part.
        let last = |t: &'p str| t.rsplit([':', '.']).next().unwrap_or(t);
        if let [only] = tokens.as_slice() {
            return Self {
                names: vec![last(only)],
                whole: true,
            };
        }
        let names = tokens
            .into_iter()
            .map(last)
            .filter(|t| looks_like_code(t))
            .collect();
        Self {
            names,
            whole: false,
        }
    }

    /// The prompt is one identifier.
    pub fn whole(&self) -> bool {
        self.whole
    }

    /// What defining `name` in `file` adds, in units of the best score.
    pub fn lift(&self, name: &str, file: &str) -> f64 {
        if !self.names.contains(&name) {
            return 0.0;
        }
        if named_after(file, name) {
            self.base() * HOME
        } else {
            self.base()
        }
    }

    /// What a module re-exporting `exports` from its dependencies adds: a name
    /// the prompt asks for that no symbol of the project defines
    /// (`FromRequest`, defined by a dependency and `pub use`d by
    /// `extract/mod.rs`) is found where the project exports it.
    pub fn lift_export<'e>(
        &self,
        mut exports: impl Iterator<Item = &'e str>,
        defined: impl Fn(&str) -> bool,
    ) -> f64 {
        if exports.any(|e| self.names.contains(&e) && !defined(e)) {
            self.base()
        } else {
            0.0
        }
    }

    fn base(&self) -> f64 {
        if self.whole { WHOLE } else { EMBEDDED }
    }
}

/// An identifier no sentence writes: inner capitals (`safeParse`, `ZodType`)
/// or an underscore inside (`field_validator`).
fn looks_like_code(t: &str) -> bool {
    let inner = t.trim_start_matches('_');
    inner.chars().skip(1).any(|c| c.is_uppercase()) || inner.trim_end_matches('_').contains('_')
}

/// The file's stem is the name, ignoring case, underscores and a plural `s`.
fn named_after(file: &str, name: &str) -> bool {
    let stem = file.rsplit('/').next().unwrap_or(file);
    let stem = stem.split('.').next().unwrap_or(stem);
    let norm = |s: &str| s.to_lowercase().replace(['_', '-'], "");
    let (stem, name) = (norm(stem), norm(name));
    stem == name || stem.strip_suffix('s') == Some(name.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_one_word_prompt_names_its_symbol_and_a_sentence_names_only_code() {
        let whole = Named::of("Semaphore");
        assert_eq!(whole.lift("Semaphore", "sync/batch.rs"), WHOLE);
        assert_eq!(whole.lift("Semaphore", "sync/semaphore.rs"), WHOLE * HOME);
        assert_eq!(whole.lift("semaphore", "sync/semaphore.rs"), 0.0);
        let sentence = Named::of("how safeParse returns a result, and z.object's shape");
        assert_eq!(sentence.lift("safeParse", "core/parse.ts"), EMBEDDED);
        assert_eq!(sentence.lift("object", "classic/schemas.ts"), 0.0);
        assert_eq!(sentence.lift("returns", "a.ts"), 0.0);
        assert_eq!(
            Named::of("Sinatra::Base").lift("Base", "base.rb"),
            WHOLE * HOME
        );
        assert_eq!(
            Named::of("custom field_validator").lift("field_validator", "v.py"),
            EMBEDDED
        );
    }
}
