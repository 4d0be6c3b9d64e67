//! The small reader of `include/netcode.h` the header test uses: comments
//! dropped, logical lines joined, preprocessor lines read for `#define`s
//! only, then the declarations' functions, variables and struct fields.

use std::collections::BTreeSet;
use std::path::PathBuf;

pub(crate) fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub(crate) fn header_text() -> String {
    let path = crate_dir().join("include/netcode.h");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// The text without `/* */` and `//` comments (each comment becomes a
/// space; newlines inside block comments are kept).
pub(crate) fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("/*") {
            let end = after
                .find("*/")
                .expect("an unterminated comment in the header");
            out.push(' ');
            out.extend(after[..end].chars().filter(|c| *c == '\n'));
            rest = &after[end + 2..];
        } else if let Some(after) = rest.strip_prefix("//") {
            rest = &after[after.find('\n').unwrap_or(after.len())..];
        } else if let Some(after) = rest.strip_prefix('"') {
            // A string literal: copied as is (it may hold "/*").
            let end = after
                .find('"')
                .expect("an unterminated string in the header");
            out.push('"');
            out.push_str(&after[..=end]);
            rest = &after[end + 1..];
        } else {
            let c = rest.chars().next().expect("not empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// The logical lines of the text: continuation lines (`\` at the end)
/// joined.
pub(crate) fn logical_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        if let Some(body) = line.strip_suffix('\\') {
            current.push_str(body);
            current.push(' ');
        } else {
            current.push_str(line);
            lines.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        lines.push(current);
    }
    lines
}

/// The C declarations of the header as a C compiler sees them: comments
/// and preprocessor lines gone, and the C++-only lines (`#ifdef
/// __cplusplus` up to its `#else` or `#endif`: `extern "C" {` and its `}`)
/// left out.
pub(crate) fn declarations(header: &str) -> String {
    let mut kept = Vec::new();
    // For each open conditional: whether it is a C++-only branch.
    let mut conditionals: Vec<bool> = Vec::new();
    for line in logical_lines(&strip_comments(header)) {
        let trimmed = line.trim_start();
        if let Some(directive) = trimmed.strip_prefix('#') {
            let directive = directive.trim_start();
            if directive.starts_with("if") {
                conditionals
                    .push(directive.starts_with("ifdef") && directive.contains("__cplusplus"));
            } else if directive.starts_with("else") || directive.starts_with("elif") {
                if let Some(cplusplus) = conditionals.last_mut() {
                    *cplusplus = false;
                }
            } else if directive.starts_with("endif") {
                conditionals.pop();
            }
            continue;
        }
        if !conditionals.iter().any(|cplusplus| *cplusplus) {
            kept.push(line);
        }
    }
    kept.join("\n")
}

pub(crate) fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Identifiers followed by `(`: in the declarations outside struct bodies,
/// the names of declared functions.
pub(crate) fn declared_functions(declarations: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut depth = 0usize;
    let chars: Vec<char> = declarations.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '{' {
            depth += 1;
        } else if c == '}' {
            depth = depth.saturating_sub(1);
        }
        if depth == 0 && is_ident_char(c) && (i == 0 || !is_ident_char(chars[i - 1])) {
            let start = i;
            while i < chars.len() && is_ident_char(chars[i]) {
                i += 1;
            }
            let name: String = chars[start..i].iter().collect();
            let mut j = i;
            while j < chars.len() && chars[j].is_whitespace() {
                j += 1;
            }
            if j < chars.len() && chars[j] == '(' && name.starts_with("netcode_") {
                names.insert(name);
            }
            continue;
        }
        i += 1;
    }
    names
}

/// The names of `extern` variables declared as function pointers:
/// `extern T (*name)(...)`.
pub(crate) fn declared_variables(declarations: &str) -> BTreeSet<String> {
    declarations
        .split(';')
        .filter_map(|statement| {
            let statement = statement.trim();
            let rest = statement.strip_prefix("extern ")?;
            if rest.trim_start().starts_with('"') {
                return None; // extern "C" {
            }
            let open = rest.find("(*")?;
            let name: String = rest[open + 2..]
                .chars()
                .skip_while(|c| c.is_whitespace())
                .take_while(|c| is_ident_char(*c))
                .collect();
            Some(name)
        })
        .collect()
}

/// Object-like `#define NAME VALUE` lines with a value, in header order.
pub(crate) fn defines(header: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in logical_lines(&strip_comments(header)) {
        let line = line.trim();
        let Some(rest) = line.strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("define") else {
            continue;
        };
        let rest = rest.trim_start();
        let name: String = rest.chars().take_while(|c| is_ident_char(*c)).collect();
        let after = &rest[name.len()..];
        if after.starts_with('(') {
            continue; // function-like
        }
        let value = after.trim();
        if !value.is_empty() {
            out.push((name, value.to_owned()));
        }
    }
    out
}

/// The fields of `struct name { ... };` in the declarations, in order.
pub(crate) fn struct_fields(declarations: &str, name: &str) -> Vec<String> {
    let opening = format!("struct {name}");
    let start = declarations
        .match_indices(&opening)
        .find_map(|(at, _)| {
            let rest = declarations[at + opening.len()..].trim_start();
            rest.starts_with('{').then_some(at)
        })
        .unwrap_or_else(|| panic!("no definition of struct {name} in the header"));
    let body_start = start + declarations[start..].find('{').expect("a brace") + 1;
    // The body ends at the brace that closes the struct (the address's
    // union has braces of its own).
    let mut depth = 1;
    let mut end = body_start;
    for (offset, c) in declarations[body_start..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    end = body_start + offset;
                    break;
                }
            }
            _ => {}
        }
    }
    let body = &declarations[body_start..end];
    let mut fields = Vec::new();
    let mut member = String::new();
    let mut depth = 0;
    for c in body.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ';' if depth == 0 => {
                fields.push(field_name(&member));
                member.clear();
                continue;
            }
            _ => {}
        }
        if depth == 0 && c != '}' {
            member.push(c);
        }
    }
    fields
}

/// The name a member declaration declares: `(*name)` for a function
/// pointer, else the last identifier before any `[`.
pub(crate) fn field_name(member: &str) -> String {
    if let Some(open) = member.find("(*") {
        return member[open + 2..]
            .chars()
            .skip_while(|c| c.is_whitespace())
            .take_while(|c| is_ident_char(*c))
            .collect();
    }
    let before_array = member.split('[').next().unwrap_or(member);
    before_array
        .trim()
        .rsplit(|c: char| !is_ident_char(c))
        .next()
        .unwrap_or_default()
        .to_owned()
}
