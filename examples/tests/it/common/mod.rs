//! A program under test: started with piped output collected line by line,
//! waited for with a deadline, killed when dropped. It logs at its default
//! level whatever `RUST_LOG` the tests run with, so that what the tests
//! read is what a user sees by default.
#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// No program may run longer than this.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// A running program whose output is collected line by line.
pub struct Program {
    name: &'static str,
    pub child: Child,
    lines: Receiver<String>,
    output: Arc<Mutex<Vec<String>>>,
}

impl Program {
    pub fn start(name: &'static str, path: &str, args: &[&str]) -> Self {
        let mut child = Command::new(path)
            .args(args)
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {path}: {e}"));
        let (send, lines) = channel();
        let output = Arc::new(Mutex::new(Vec::new()));
        let stdout = child.stdout.take().unwrap();
        let stderr = child.stderr.take().unwrap();
        for (stream, tag) in [
            (Box::new(stdout) as Box<dyn std::io::Read + Send>, ""),
            (Box::new(stderr), "stderr: "),
        ] {
            let send = send.clone();
            let output = output.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    output.lock().unwrap().push(format!("{tag}{line}"));
                    let _ = send.send(format!("{tag}{line}"));
                }
            });
        }
        Self {
            name,
            child,
            lines,
            output,
        }
    }

    /// The first stdout line containing `needle`, within the deadline.
    pub fn line_with(&mut self, needle: &str) -> String {
        let start = Instant::now();
        while start.elapsed() < DEADLINE {
            match self.lines.recv_timeout(Duration::from_millis(100)) {
                Ok(line) if line.contains(needle) => return line,
                Ok(_) => {}
                Err(_) => {
                    if let Ok(Some(status)) = self.child.try_wait() {
                        panic!(
                            "{} exited ({status}) before printing {needle:?}:\n{}",
                            self.name,
                            self.transcript()
                        );
                    }
                }
            }
        }
        let _ = self.child.kill();
        panic!(
            "{} never printed {needle:?}:\n{}",
            self.name,
            self.transcript()
        );
    }

    /// Waits for the exit, killing the program at the deadline.
    pub fn finish(&mut self) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                // Let the reader threads drain what is left.
                std::thread::sleep(Duration::from_millis(50));
                return status;
            }
            if start.elapsed() > DEADLINE {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "{} ran past {DEADLINE:?}:\n{}",
                    self.name,
                    self.transcript()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Everything the program wrote so far, standard error's lines tagged
    /// `stderr: `. The two streams are read by two threads, so their
    /// lines interleave in about the order they were written, not exactly.
    pub fn transcript(&self) -> String {
        self.output.lock().unwrap().join("\n")
    }

    /// What the program wrote to standard output so far, in its order.
    pub fn stdout(&self) -> String {
        let output = self.output.lock().unwrap();
        let lines: Vec<&str> = output
            .iter()
            .filter(|line| !line.starts_with("stderr: "))
            .map(String::as_str)
            .collect();
        lines.join("\n")
    }

    /// The lines the program wrote to standard error so far that are not
    /// its log's `info` lines (`[INFO  target] ...`): its `error:` lines
    /// and warnings, without the `stderr: ` tag.
    pub fn errors(&self) -> Vec<String> {
        self.output
            .lock()
            .unwrap()
            .iter()
            .filter_map(|line| line.strip_prefix("stderr: "))
            .filter(|line| !line.starts_with("[INFO "))
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
