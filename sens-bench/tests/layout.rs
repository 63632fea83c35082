//! The rooms of `sens-bench/src` (its top-level modules) use each other in one
//! direction only: a `use crate::ROOM` outside test code is an edge, and the
//! edges must form no cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Room -> the rooms its non-test code names through `crate::`.
fn room_edges(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut folders = vec![src.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("src is listable") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            if path.extension().is_none_or(|ext| ext != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).expect("under src");
            let first = relative.components().next().expect("a component");
            let room = first
                .as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string();
            let text = std::fs::read_to_string(&path).expect("readable source");
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for (index, _) in code.match_indices("crate::") {
                let target: String = code[index + "crate::".len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !target.is_empty() && target != room {
                    edges.entry(room.clone()).or_default().insert(target);
                }
            }
        }
    }
    edges
}

/// A cycle among the rooms, as the path that closes it.
fn find_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        room: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|r| r == room) {
            let mut cycle = path[start..].to_vec();
            cycle.push(room.to_string());
            return Some(cycle);
        }
        if !done.insert(room.to_string()) {
            return None;
        }
        path.push(room.to_string());
        for next in edges.get(room).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|room| visit(room, edges, &mut Vec::new(), &mut done))
}

#[test]
fn the_rooms_of_src_have_no_import_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = room_edges(&src);
    assert!(
        edges.contains_key("batch"),
        "the walk found the rooms: {edges:?}"
    );
    assert_eq!(find_cycle(&edges), None, "rooms: {edges:?}");
}

#[test]
fn a_cycle_is_found() {
    let edges: BTreeMap<String, BTreeSet<String>> =
        [("a", &["b"][..]), ("b", &["c"][..]), ("c", &["a"][..])]
            .into_iter()
            .map(|(room, to)| (room.to_string(), to.iter().map(|t| t.to_string()).collect()))
            .collect();
    assert_eq!(
        find_cycle(&edges),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}
