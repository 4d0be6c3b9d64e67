//! Headless Chromium for the end-to-end browser tests (netcode-browser's
//! live test, the examples' browser demo test): which browser and web
//! package the environment names ([`BrowserSetup::from_env`]), and a
//! browser on one page ([`HeadlessChromium`]) that is ended, with every
//! process it started, when dropped.
//!
//! `NETCODE_CHROMIUM` names the browser and `NETCODE_BROWSER_PKG` the web
//! package (the directory `netcode-browser/build-web.sh` writes); `.ci/run`
//! sets both. Without them a test says SKIPPED on stderr and passes,
//! unless `NETCODE_REQUIRE_BROWSER=1` (also set by `.ci/run`) makes it
//! fail.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// What the environment variables name, as a message says it.
const MISSING: &str = "NETCODE_CHROMIUM (Chromium's path) and NETCODE_BROWSER_PKG (the web \
                       package netcode-browser/build-web.sh writes)";

/// The browser and the web package an end-to-end test runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowserSetup {
    /// Chromium's program (`NETCODE_CHROMIUM`).
    pub chromium: PathBuf,
    /// The web package's directory (`NETCODE_BROWSER_PKG`), holding
    /// `netcode_browser.js` and its `.wasm`.
    pub package: PathBuf,
}

impl BrowserSetup {
    /// The browser and the package from the environment. When either
    /// variable is missing: `None`, after a line on stderr saying that
    /// `test` is SKIPPED; or, with `NETCODE_REQUIRE_BROWSER=1`, a panic.
    /// A package without `netcode_browser.js` panics either way.
    pub fn from_env(test: &str) -> Option<Self> {
        let chromium = std::env::var_os("NETCODE_CHROMIUM");
        let package = std::env::var_os("NETCODE_BROWSER_PKG");
        let (Some(chromium), Some(package)) = (chromium, package) else {
            assert!(
                std::env::var("NETCODE_REQUIRE_BROWSER").as_deref() != Ok("1"),
                "NETCODE_REQUIRE_BROWSER=1 but {MISSING} are not both set"
            );
            eprintln!("SKIPPED {test}: set {MISSING} to run it");
            return None;
        };
        let package = PathBuf::from(package);
        assert!(
            package.join("netcode_browser.js").is_file(),
            "NETCODE_BROWSER_PKG={}: no netcode_browser.js there (run netcode-browser/build-web.sh)",
            package.display()
        );
        Some(Self {
            chromium: PathBuf::from(chromium),
            package,
        })
    }

    /// This setup's Chromium, headless, on `url`.
    pub fn open(&self, url: &str) -> HeadlessChromium {
        HeadlessChromium::open(&self.chromium, url)
    }
}

/// Profiles opened by this process so far: each browser gets its own.
static PROFILES: AtomicU64 = AtomicU64::new(0);

/// Headless Chromium on one page, in a process group of its own with a
/// fresh profile directory. It never exits by itself: dropping it kills
/// the group (the browser and every helper it started) by the group's id,
/// waits for the browser, and removes the profile.
#[derive(Debug)]
pub struct HeadlessChromium {
    child: Child,
    profile: PathBuf,
}

impl HeadlessChromium {
    /// Starts `program` (Chromium) headless on `url`; panics if it cannot
    /// be started.
    pub fn open(program: &Path, url: &str) -> Self {
        let profile = std::env::temp_dir().join(format!(
            "netcode-chromium-{}-{}",
            std::process::id(),
            PROFILES.fetch_add(1, Ordering::Relaxed)
        ));
        // A leftover of an earlier process with the same id.
        let _ = std::fs::remove_dir_all(&profile);
        let child = Command::new(program)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(url)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start {}: {e} (set NETCODE_CHROMIUM)",
                    program.display()
                )
            });
        Self { child, profile }
    }
}

impl Drop for HeadlessChromium {
    fn drop(&mut self) {
        // The group the browser leads: the browser and its helpers.
        if let Ok(group) = i32::try_from(self.child.id()) {
            let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}
