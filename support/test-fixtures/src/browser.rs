//! Headless browsers for the end-to-end browser tests (netcode-browser's
//! live test, the examples' browser demo test, the fleet's browser test):
//! which engines and web package the environment names
//! ([`BrowserSetup::from_env`]), and a browser on one page
//! ([`HeadlessBrowser`]) that is ended, with every process it started, when
//! dropped.
//!
//! `NETCODE_CHROMIUM` names Chromium, `NETCODE_FIREFOX` Firefox (ESR or
//! later), and `NETCODE_BROWSER_PKG` the web package (the directory
//! `netcode-browser/build-web.sh` writes); `.ci/run` sets all three. A test
//! asks for one engine; without its variable or the package it says
//! SKIPPED on stderr and passes, unless `NETCODE_REQUIRE_BROWSER=1` (also
//! set by `.ci/run`) makes it fail.
//!
//! Firefox has no WebDriver here (Debian ships no geckodriver), and none
//! is needed: every page these tests open reports to the test's own HTTP
//! server.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// A browser engine the tests can drive headless.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// Chromium (Blink), as Chrome and Edge ship it.
    Chromium,
    /// Firefox (Gecko); Debian's `firefox-esr` in CI.
    Firefox,
}

impl Engine {
    /// The variable naming this engine's program.
    pub fn variable(self) -> &'static str {
        match self {
            Engine::Chromium => "NETCODE_CHROMIUM",
            Engine::Firefox => "NETCODE_FIREFOX",
        }
    }

    /// The engine's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Chromium => "Chromium",
            Engine::Firefox => "Firefox",
        }
    }
}

/// The browser and the web package an end-to-end test runs, and its turn:
/// while a setup lives, no other browser test of this process gets one
/// (two browsers starting at once on a two-core machine eat each other's
/// page deadlines), so a test asks for it before it starts its servers or
/// mints its tokens.
#[derive(Debug)]
pub struct BrowserSetup {
    /// Which engine `program` is.
    pub engine: Engine,
    /// The browser's program (`NETCODE_CHROMIUM` or `NETCODE_FIREFOX`).
    pub program: PathBuf,
    /// The web package's directory (`NETCODE_BROWSER_PKG`), holding
    /// `netcode_browser.js` and its `.wasm`.
    pub package: PathBuf,
    _turn: MutexGuard<'static, ()>,
}

impl BrowserSetup {
    /// `engine` and the package from the environment. When either variable
    /// is missing: `None`, after a line on stderr saying that `test` is
    /// SKIPPED in that engine; or, with `NETCODE_REQUIRE_BROWSER=1`, a
    /// panic. A package without `netcode_browser.js` panics either way.
    /// Waits for this process's other browser tests to end first.
    pub fn from_env(test: &str, engine: Engine) -> Option<Self> {
        let program = std::env::var_os(engine.variable());
        let package = std::env::var_os("NETCODE_BROWSER_PKG");
        let (Some(program), Some(package)) = (program, package) else {
            let missing = format!(
                "{} ({}'s path) and NETCODE_BROWSER_PKG (the web package \
                 netcode-browser/build-web.sh writes)",
                engine.variable(),
                engine.name()
            );
            assert!(
                std::env::var("NETCODE_REQUIRE_BROWSER").as_deref() != Ok("1"),
                "NETCODE_REQUIRE_BROWSER=1 but {missing} are not both set"
            );
            eprintln!(
                "SKIPPED {test} in {}: set {missing} to run it",
                engine.name()
            );
            return None;
        };
        let package = PathBuf::from(package);
        assert!(
            package.join("netcode_browser.js").is_file(),
            "NETCODE_BROWSER_PKG={}: no netcode_browser.js there (run netcode-browser/build-web.sh)",
            package.display()
        );
        // A test that panicked with its turn poisons the lock; its browser
        // is gone all the same.
        let turn = ONE_AT_A_TIME
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        Some(Self {
            engine,
            program: PathBuf::from(program),
            package,
            _turn: turn,
        })
    }

    /// This setup's browser, headless, on `url`.
    pub fn open(&self, url: &str) -> HeadlessBrowser {
        HeadlessBrowser::open(self.engine, &self.program, url)
    }
}

/// Profiles opened by this process so far: each browser gets its own.
static PROFILES: AtomicU64 = AtomicU64::new(0);

/// One browser test at a time in a test binary ([`BrowserSetup`]).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A headless browser on one page, in a process group of its own with a
/// fresh profile directory. It never exits by itself: dropping it kills
/// the group (the browser and every helper it started) by the group's id,
/// waits for the browser, and removes the profile.
#[derive(Debug)]
pub struct HeadlessBrowser {
    child: Child,
    profile: PathBuf,
}

impl HeadlessBrowser {
    /// Starts `program` (an `engine`) headless on `url`; panics if it
    /// cannot be started.
    pub fn open(engine: Engine, program: &Path, url: &str) -> Self {
        let profile = std::env::temp_dir().join(format!(
            "netcode-{}-{}-{}",
            engine.name().to_lowercase(),
            std::process::id(),
            PROFILES.fetch_add(1, Ordering::Relaxed)
        ));
        // A leftover of an earlier process with the same id.
        let _ = std::fs::remove_dir_all(&profile);
        let mut command = Command::new(program);
        match engine {
            Engine::Chromium => {
                command
                    .args([
                        "--headless=new",
                        "--no-sandbox",
                        "--disable-gpu",
                        "--no-first-run",
                    ])
                    .arg(format!("--user-data-dir={}", profile.display()));
            }
            Engine::Firefox => {
                std::fs::create_dir_all(&profile).expect("a profile directory");
                std::fs::write(profile.join("user.js"), FIREFOX_PREFERENCES)
                    .expect("the profile's preferences");
                // Firefox writes its caches under HOME whatever the profile.
                command
                    .env("HOME", &profile)
                    .args(["--headless", "--no-remote", "--profile"])
                    .arg(&profile);
            }
        }
        let child = command
            .arg(url)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start {}: {e} (set {})",
                    program.display(),
                    engine.variable()
                )
            });
        Self { child, profile }
    }
}

/// A fresh Firefox profile's preferences: no first-run pages, no telemetry
/// or update checks reaching for a network the tests do not have.
const FIREFOX_PREFERENCES: &str = r#"user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("browser.aboutwelcome.enabled", false);
user_pref("browser.startup.homepage_override.mstone", "ignore");
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);
user_pref("app.update.enabled", false);
user_pref("network.captive-portal-service.enabled", false);
user_pref("network.connectivity-service.enabled", false);
"#;

impl Drop for HeadlessBrowser {
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
