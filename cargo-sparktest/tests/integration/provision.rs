//! Provisioning the reference targets: locked, re-verified, and named on
//! failure (an index's answer apart from a tool's crash). The shell tests
//! serve fake packages to pip from a folder (and a fake uv to the vLLM
//! script) and give every run its own cache, so they need neither the
//! network nor the real build.

use std::process::Command;

use crate::support::*;

#[test]
fn provisioning_is_locked_verified_and_named_on_failure() {
    let out = Command::new("bash")
        .arg(repo().join("scripts/tests/reference-target-test.sh"))
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn a_crashed_uv_or_pip_is_said_to_have_crashed_and_run_once_more() {
    let out = Command::new("bash")
        .arg(repo().join("scripts/tests/vllm-target-test.sh"))
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
}
