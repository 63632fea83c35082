//! Every task of `bench/tasks` is fair to correct work: its reference solution,
//! played under the engine as the oracle plays it under C2, gets no denial, block
//! or pause. `validate` runs the same check after the task's set-up; this test
//! runs it without set-up or builds, so a rule change that would fail CI's
//! validation fails here first, in seconds.

use std::path::Path;

use sens_bench::spec::task::load_tasks;
use sens_bench::validate::fairness::FairPlay;
use sens_bench::workspace::Workspace;
use sens_bench::workspace::cache::Cache;
use sens_bench::workspace::git::apply_patch;

#[test]
fn every_bench_task_reference_passes_the_engine() {
    let tasks_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/tasks");
    let tasks = load_tasks(&tasks_dir, None).expect("the bench's tasks load");
    assert!(tasks.len() >= 12, "{} tasks", tasks.len());
    let cache = Cache::from_env().expect("a cache folder");
    let mut unfair = Vec::new();
    for task in &tasks {
        let copy = Workspace::for_task(task, &cache).expect("the task materializes");
        let play = FairPlay::for_task(&copy.root, task).expect("the engine starts on the copy");
        apply_patch(&copy.root, &task.reference).expect("the reference applies");
        if let Err(err) = play.finish() {
            unfair.push(format!("{}: {err:#}", task.id));
        }
    }
    assert!(unfair.is_empty(), "{}", unfair.join("\n"));
}
