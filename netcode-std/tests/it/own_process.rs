//! A test that changes what a process has only one of (a resource limit,
//! for one) runs alone in a child process: this binary again, asked for
//! that one test, so that no other test shares the process while the
//! change holds. The child's output is shown if it fails.
#![allow(dead_code)]

use std::process::Command;

/// Set in the child to the name of the test it runs.
const CHILD: &str = "NETCODE_TEST_OWN_PROCESS";

/// For the test `name` (its path in this binary, as `--list` prints it):
/// in the child process, returns true, and the caller goes on to its body.
/// Otherwise runs this binary again for that test alone, asserts that it
/// ran and passed there, and returns false: the caller returns at once.
pub(crate) fn alone_in_child(name: &str) -> bool {
    if std::env::var_os(CHILD).is_some_and(|running| running == name) {
        return true;
    }
    let binary = std::env::current_exe().expect("the path of this test binary");
    let output = Command::new(binary)
        .args([name, "--exact", "--test-threads=1"])
        .env(CHILD, name)
        .output()
        .expect("run this test binary again");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{name} failed in its own process ({}):\n{stdout}\n{stderr}",
        output.status
    );
    assert!(
        stdout.contains("test result: ok. 1 passed"),
        "{name} did not run in its own process:\n{stdout}\n{stderr}"
    );
    false
}
