//! The sens-bench binary under test.

use std::ffi::OsStr;
use std::process::{Command, Output};

/// Runs the binary built for these tests with `args`, without an API key (so a
/// run never reaches a real model), and echoes its standard error into the
/// test's output, shown when the test fails.
pub fn sens_bench<S: AsRef<OsStr>>(args: &[S]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_sens-bench"))
        .args(args)
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .expect("the sens-bench binary starts");
    eprintln!("{}", String::from_utf8_lossy(&output.stderr));
    output
}
