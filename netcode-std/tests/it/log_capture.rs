//! The binary's one logger: `log` takes a single logger per process, and
//! the tests that read what the host logs run in parallel threads of this
//! binary. A test that calls [`capture`] gets the records of target
//! `netcode` logged on its own thread from then on (the host logs on the
//! thread that calls its methods); records of other threads, tests that
//! never asked included, are neither formatted nor kept.
#![allow(dead_code)]

use std::cell::RefCell;
use std::sync::Once;

use log::{Level, LevelFilter, Log, Metadata, Record};

/// Routes each record to the capture of the thread that logged it.
struct Router;

thread_local! {
    /// This thread's records since its [`capture`], if it asked for them.
    static LINES: RefCell<Option<Vec<(Level, String)>>> = const { RefCell::new(None) };
}

/// Whether this thread keeps its records.
fn capturing() -> bool {
    LINES.with(|lines| lines.borrow().is_some())
}

impl Log for Router {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target() == "netcode" && capturing()
    }

    fn log(&self, record: &Record<'_>) {
        if self.enabled(record.metadata()) {
            let line = (record.level(), record.args().to_string());
            LINES.with(|lines| {
                if let Some(lines) = lines.borrow_mut().as_mut() {
                    lines.push(line);
                }
            });
        }
    }

    fn flush(&self) {}
}

static ROUTER: Router = Router;
static INSTALL: Once = Once::new();

/// Installs the router (once per process, at level debug) and starts this
/// thread's capture afresh.
pub(crate) fn capture() {
    INSTALL.call_once(|| {
        log::set_logger(&ROUTER).expect("no other logger in this binary");
        log::set_max_level(LevelFilter::Debug);
    });
    LINES.with(|lines| *lines.borrow_mut() = Some(Vec::new()));
}

/// This thread's captured lines so far at `level` that contain `text`.
pub(crate) fn lines(level: Level, text: &str) -> Vec<String> {
    LINES.with(|lines| {
        lines
            .borrow()
            .iter()
            .flatten()
            .filter(|(l, s)| *l == level && s.contains(text))
            .map(|(_, s)| s.clone())
            .collect()
    })
}
