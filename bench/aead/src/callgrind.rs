//! Instruction counts from `valgrind --tool=callgrind`: one process per
//! implementation and case, collecting only inside [`measured_once`], and a
//! reader of callgrind's output that totals the self cost per source file
//! (inlined code counts in the file it was written in, from the debug line
//! tables), per function, and per call from one function to another.

use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::process::Command;

/// The one function whose instructions are collected: one operation, called
/// through a trait object so that it is never inlined into the loop.
#[inline(never)]
pub fn measured_once(operation: &mut dyn FnMut() -> crate::Tag) -> crate::Tag {
    operation()
}

/// The symbol pattern that selects [`measured_once`] for `--toggle-collect`.
/// Its demangled name, the root of the call tree, is [`ROOT`].
pub const TOGGLE: &str = "*callgrind::measured_once*";

/// The demangled name of [`measured_once`].
pub const ROOT: &str = "netcode_bench_aead::callgrind::measured_once";

/// Runs `exe run <implementation> <case> <iterations>` under callgrind,
/// writing its output to `out`, and returns the instructions collected.
pub fn count(
    exe: &Path,
    implementation: &str,
    case: &str,
    iterations: u64,
    out: &Path,
) -> io::Result<u64> {
    let status = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--toggle-collect={TOGGLE}"))
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(exe)
        .args(["run", implementation, case, &iterations.to_string()])
        .stderr(std::process::Stdio::null())
        .status()?;
    if !status.success() {
        return Err(io::Error::other(format!(
            "valgrind on {implementation} {case}: {status}"
        )));
    }
    Ok(read(out)?.total)
}

/// What one callgrind output file says.
#[derive(Debug, Default)]
pub struct Profile {
    /// Instructions collected in all.
    pub total: u64,
    /// Self instructions per source file, largest first.
    pub by_file: Vec<(String, u64)>,
    /// Self instructions per function, largest first.
    pub by_function: Vec<(String, u64)>,
    /// Inclusive instructions of the calls from one function (first) to
    /// another (second), summed over call sites, largest first.
    pub calls: Vec<(String, String, u64)>,
}

impl Profile {
    /// The calls `function` makes, largest first.
    pub fn callees<'a>(&'a self, function: &'a str) -> impl Iterator<Item = (&'a str, u64)> {
        self.calls
            .iter()
            .filter(move |(caller, _, _)| caller == function)
            .map(|(_, callee, cost)| (callee.as_str(), *cost))
    }

    /// Self instructions of `function`.
    pub fn self_cost(&self, function: &str) -> u64 {
        self.by_function
            .iter()
            .find(|(name, _)| name == function)
            .map_or(0, |(_, cost)| *cost)
    }
}

/// Reads a callgrind output file (`events: Ir`, name compression on or off).
pub fn read(path: &Path) -> io::Result<Profile> {
    let text = std::fs::read_to_string(path)?;
    let mut files: HashMap<String, String> = HashMap::new();
    let mut functions: HashMap<String, String> = HashMap::new();
    let mut by_file: HashMap<String, u64> = HashMap::new();
    let mut by_function: HashMap<String, u64> = HashMap::new();
    let mut calls: HashMap<(String, String), u64> = HashMap::new();
    let mut callee = String::new();
    let mut total = None;
    let mut object_file = String::new();
    let mut current_file = String::new();
    let mut current_function = String::new();
    let mut skip_next_cost = false;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("fl=") {
            object_file = name(&mut files, rest);
            current_file = object_file.clone();
        } else if let Some(rest) = line
            .strip_prefix("fi=")
            .or_else(|| line.strip_prefix("fe="))
        {
            current_file = name(&mut files, rest);
        } else if let Some(rest) = line.strip_prefix("fn=") {
            current_function = name(&mut functions, rest);
            current_file = object_file.clone();
        } else if let Some(rest) = line
            .strip_prefix("cfi=")
            .or_else(|| line.strip_prefix("cfl="))
        {
            name(&mut files, rest);
        } else if let Some(rest) = line.strip_prefix("cfn=") {
            callee = name(&mut functions, rest);
        } else if line.starts_with("calls=") {
            // The next cost line is the call's inclusive cost: not self cost.
            skip_next_cost = true;
        } else if let Some(rest) = line
            .strip_prefix("totals:")
            .or_else(|| line.strip_prefix("summary:"))
        {
            total = rest.trim().parse().ok().or(total);
        } else if line.starts_with(|c: char| c.is_ascii_digit() || "+-*".contains(c)) {
            let cost: u64 = line
                .split_whitespace()
                .nth(1)
                .and_then(|c| c.parse().ok())
                .unwrap_or(0);
            if skip_next_cost {
                skip_next_cost = false;
                *calls
                    .entry((current_function.clone(), callee.clone()))
                    .or_default() += cost;
            } else {
                *by_file.entry(current_file.clone()).or_default() += cost;
                *by_function.entry(current_function.clone()).or_default() += cost;
            }
        }
    }
    let sorted = |map: HashMap<String, u64>| {
        let mut entries: Vec<_> = map.into_iter().filter(|(_, cost)| *cost > 0).collect();
        entries.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        entries
    };
    let mut calls: Vec<_> = calls
        .into_iter()
        .map(|((caller, callee), cost)| (caller, callee, cost))
        .collect();
    calls.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| (&a.0, &a.1).cmp(&(&b.0, &b.1))));
    Ok(Profile {
        total: total.ok_or_else(|| io::Error::other("no totals line in the callgrind output"))?,
        by_file: sorted(by_file),
        by_function: sorted(by_function),
        calls,
    })
}

/// Resolves a compressed name, `(id) name` to define or `(id)` to refer.
fn name(table: &mut HashMap<String, String>, field: &str) -> String {
    let field = field.trim();
    let Some(rest) = field.strip_prefix('(') else {
        return field.to_owned();
    };
    let Some((id, tail)) = rest.split_once(')') else {
        return field.to_owned();
    };
    let tail = tail.trim();
    if tail.is_empty() {
        table.get(id).cloned().unwrap_or_default()
    } else {
        table.insert(id.to_owned(), tail.to_owned());
        tail.to_owned()
    }
}
