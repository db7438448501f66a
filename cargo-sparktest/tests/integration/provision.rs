//! Provisioning the reference target: locked, re-verified, and named on
//! failure. The shell test serves fake packages to pip from a folder and
//! gives every run its own cache, so it needs neither the network nor the
//! real build.

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
