//! What the end-to-end tests share: running the kvtune binary, scratch
//! folders on the main disk, the Python the checks use.
#![allow(dead_code)] // each test file uses some of these

use std::path::Path;
use std::process::{Command, Output};

/// A budget small enough for a test, at scale 1.
pub const SMALL: [&str; 6] = ["--budget", "64M", "--dataset", "spork", "--scale", "1"];

/// `SMALL` followed by `rest`.
pub fn small(rest: &[&str]) -> Vec<String> {
    SMALL.iter().chain(rest).map(|s| s.to_string()).collect()
}

pub fn kvtune_with(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kvtune")).args(args).output().expect("kvtune runs")
}

/// kvtune started in the background, its stderr kept for `wait_with_output`.
pub fn spawn(args: &[String]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_kvtune"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kvtune starts")
}

pub fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

pub fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

pub fn path_arg(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The Python the checks below run (KVTUNE_PYTHON, default `python3`) if
/// it has `modules`; without them the check is skipped, unless
/// KVTUNE_REQUIRE_PYTHON is set (CI sets it, with a Python that has them).
pub fn python_with(modules: &str) -> Option<String> {
    let python = std::env::var("KVTUNE_PYTHON").unwrap_or_else(|_| "python3".into());
    let has = Command::new(&python).args(["-c", &format!("import {modules}")]).output();
    if has.is_ok_and(|o| o.status.success()) {
        return Some(python);
    }
    assert!(
        std::env::var_os("KVTUNE_REQUIRE_PYTHON").is_none(),
        "KVTUNE_REQUIRE_PYTHON: {python} lacks {modules}"
    );
    eprintln!("skipped: {python} lacks {modules}");
    None
}
