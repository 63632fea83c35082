//! The Kubernetes manifest (`scripts/k8s/batch-job.yaml`), rendered for three
//! shards: no cluster is reachable here, so its fields are checked, and the pods'
//! command lines run under `sh` against a stand-in `sens-bench` that prints its
//! arguments, one index at a time.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;
use yaml_serde::Value;

const SHARDS: usize = 3;

fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/k8s")
}

/// The rendered documents, by kind and name.
fn render() -> Vec<Value> {
    let output = Command::new(scripts().join("render.sh"))
        .args([&SHARDS.to_string(), "2", "example/sens-bench:1", "study"])
        .args([
            "run",
            "--tasks",
            "bench/tasks",
            "--condition",
            "C0,C2",
            "--reps",
            "3",
        ])
        .output()
        .expect("render.sh starts");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).expect("UTF-8");
    assert!(!text.contains('@'), "every placeholder is filled:\n{text}");
    yaml_serde::Deserializer::from_str(&text)
        .map(|document| Value::deserialize(document).expect("valid YAML"))
        .collect()
}

fn named<'a>(documents: &'a [Value], kind: &str, name: &str) -> &'a Value {
    documents
        .iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

fn text(value: &Value) -> &str {
    value
        .as_str()
        .unwrap_or_else(|| panic!("not a string: {value:?}"))
}

/// Runs a container's command with `env` and a `sens-bench` that prints its
/// arguments one a line; returns them.
fn arguments_of(container: &Value, env: &[(&str, String)]) -> Vec<String> {
    let stub = tempfile::tempdir().unwrap();
    let bin = stub.path().join("sens-bench");
    std::fs::write(&bin, "#!/bin/sh\nprintf '%s\\n' \"$@\"\n").unwrap();
    let mut permissions = std::fs::metadata(&bin).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&bin, permissions).unwrap();
    let command: Vec<&str> = container["command"]
        .as_sequence()
        .unwrap()
        .iter()
        .chain(container["args"].as_sequence().unwrap())
        .map(text)
        .collect();
    let path = format!(
        "{}:{}",
        stub.path().display(),
        std::env::var("PATH").unwrap()
    );
    let output = Command::new(command[0])
        .args(&command[1..])
        .env("PATH", path)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("the pod's shell starts");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn mounts_the_results_volume(pod: &Value, container: &Value) {
    let volume = &pod["volumes"][0];
    assert_eq!(
        volume["persistentVolumeClaim"]["claimName"],
        "sens-bench-results"
    );
    let mount = &container["volumeMounts"][0];
    assert_eq!(
        (&mount["name"], &mount["mountPath"]),
        (&volume["name"], &Value::from("/results"))
    );
}

#[test]
fn the_indexed_job_maps_each_completion_index_to_its_shard_on_the_shared_volume() {
    let documents = render();
    let claim = named(&documents, "PersistentVolumeClaim", "sens-bench-results");
    assert_eq!(claim["spec"]["accessModes"][0], "ReadWriteMany");

    let job = named(&documents, "Job", "sens-bench-study-shards");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(spec["completions"], SHARDS);
    assert_eq!(spec["parallelism"], SHARDS);
    let pod = &spec["template"]["spec"];
    let container = &pod["containers"][0];
    assert_eq!(container["image"], "example/sens-bench:1");
    mounts_the_results_volume(pod, container);

    for index in 0..SHARDS {
        let args = arguments_of(container, &[("JOB_COMPLETION_INDEX", index.to_string())]);
        let shard = index + 1;
        let expected = format!(
            "run --tasks bench/tasks --condition C0,C2 --reps 3 --shard {shard}/{SHARDS} \
             --jobs 2 --out /results/study/shard-{shard}"
        );
        assert_eq!(args.join(" "), expected, "index {index}");
    }
}

#[test]
fn the_merge_job_joins_every_shard_folder_and_reports() {
    let documents = render();
    let job = named(&documents, "Job", "sens-bench-study-merge");
    assert_eq!(job["metadata"]["labels"]["sens-bench/part"], "merge");
    let pod = &job["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    mounts_the_results_volume(pod, container);
    let args = arguments_of(container, &[]);
    let mut expected = vec!["merge", "--report", "/results/study/merged"]
        .into_iter()
        .map(str::to_string)
        .collect::<Vec<_>>();
    expected.extend((1..=SHARDS).map(|k| format!("/results/study/shard-{k}")));
    assert_eq!(args, expected);
    for part in ["PersistentVolumeClaim", "Job"] {
        let shards = documents.iter().filter(|d| {
            d["kind"] == part && d["metadata"]["labels"]["sens-bench/part"] == "shards"
        });
        assert_eq!(
            shards.count(),
            1,
            "one {part} applied with -l sens-bench/part=shards"
        );
    }
}

#[test]
fn render_refuses_a_shard_count_that_is_not_a_number() {
    let output = Command::new(scripts().join("render.sh"))
        .args(["three", "2", "image", "study", "run"])
        .output()
        .expect("render.sh starts");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("`three`"));
}
