//! Every example program answers `--help` and `-h` with its usage on
//! standard output and exit code 0, and a command line it does not take
//! with one `error:` line on standard error and exit code 2. Each runs as
//! the `netcode-*` binary that shares its source.

use crate::common::Program;

use netcode_examples::USAGE_ERROR;

/// Each example: its name, its binary, and the arguments and options its
/// usage must name.
const EXAMPLES: &[(&str, &str, &[&str])] = &[
    (
        "server",
        env!("CARGO_BIN_EXE_netcode-server"),
        &["[ADDRESS [ADDRESS2]]", "--seconds N"],
    ),
    (
        "client",
        env!("CARGO_BIN_EXE_netcode-client"),
        &["[SERVER_ADDRESS]", "--seconds N"],
    ),
    (
        "client_server",
        env!("CARGO_BIN_EXE_netcode-client-server"),
        &["no arguments"],
    ),
    (
        "token",
        env!("CARGO_BIN_EXE_netcode-token"),
        &[
            "SERVER_ADDRESS",
            "--key HEX",
            "--protocol-id N",
            "--client-id N",
            "--expire SECONDS",
            "--timeout SECONDS",
        ],
    ),
    (
        "mio_server",
        env!("CARGO_BIN_EXE_netcode-mio-server"),
        &["[ADDRESS [ADDRESS2]]", "--seconds N", "--clients K"],
    ),
    (
        "connect_time",
        env!("CARGO_BIN_EXE_netcode-connect-time"),
        &["[COUNT]"],
    ),
    (
        "simulated",
        env!("CARGO_BIN_EXE_netcode-simulated"),
        &["no arguments"],
    ),
    (
        "soak",
        env!("CARGO_BIN_EXE_netcode-soak"),
        &["--minutes N", "--seed S"],
    ),
];

/// The program's output: standard output, and standard error's lines.
fn split(program: &Program) -> (Vec<String>, Vec<String>) {
    let transcript = program.transcript();
    let (errors, output): (Vec<&str>, Vec<&str>) =
        transcript.lines().partition(|l| l.starts_with("stderr: "));
    (
        output.iter().map(|l| l.to_string()).collect(),
        errors.iter().map(|l| l.to_string()).collect(),
    )
}

#[test]
fn every_example_prints_its_usage_for_help_and_exits_zero() {
    for &(name, path, named) in EXAMPLES {
        let mut texts = Vec::new();
        for flag in ["--help", "-h"] {
            let mut program = Program::start(name, path, &[flag]);
            let status = program.finish();
            let (output, errors) = split(&program);
            let text = output.join("\n");
            assert_eq!(status.code(), Some(0), "{name} {flag}:\n{text}");
            assert!(errors.is_empty(), "{name} {flag} wrote errors: {errors:?}");
            let usage = format!("--example {name}");
            assert!(
                text.starts_with(&format!("{name}: ")) && text.contains(&usage),
                "{name} {flag} does not name itself and its command:\n{text}"
            );
            for item in named.iter().copied().chain(["-h, --help"]) {
                assert!(text.contains(item), "{name} {flag} omits {item:?}:\n{text}");
            }
            texts.push(text);
        }
        assert_eq!(texts[0], texts[1], "{name}: -h and --help differ");
    }
}

#[test]
fn every_example_refuses_an_unknown_option_with_exit_code_two() {
    for &(name, path, _) in EXAMPLES {
        let mut program = Program::start(name, path, &["--no-such-option"]);
        let status = program.finish();
        let (output, errors) = split(&program);
        assert_eq!(
            status.code(),
            Some(i32::from(USAGE_ERROR)),
            "{name}:\n{}",
            program.transcript()
        );
        assert!(output.is_empty(), "{name} printed {output:?}");
        assert_eq!(errors.len(), 1, "{name}: {errors:?}");
        assert!(
            errors[0].starts_with("stderr: error: invalid option '--no-such-option'"),
            "{name}: {errors:?}"
        );
    }
}
