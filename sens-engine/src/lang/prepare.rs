//! Preparing a source for its grammar: every byte offset and line kept, only
//! characters blanked (`#` comment runs thinned, a component's `<script>` blocks
//! kept alone).

use std::borrow::Cow;

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

#[cfg(test)]
mod tests {
    use super::*;

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
