//! The examples' command lines, read with lexopt: `-h` or `--help` prints
//! a program's usage and exits 0; a wrong command line prints one `error:`
//! line and exits 2; the arguments the server and client programs share
//! (addresses and `--seconds N`); option values read with messages that
//! name the option.

use std::process::ExitCode;
use std::str::FromStr;

use lexopt::{Arg, Parser, ValueExt};

use crate::{Tally, finish};

/// The exit code of a wrong command line (0 is success or help, 1 a run
/// that failed).
pub const USAGE_ERROR: u8 = 2;

/// Why a command line is not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandLineError {
    /// `-h` or `--help`: print the usage.
    Help,
    /// The command line is wrong, for this reason.
    Invalid(String),
}

impl From<lexopt::Error> for CommandLineError {
    fn from(error: lexopt::Error) -> Self {
        Self::Invalid(error.to_string())
    }
}

impl From<String> for CommandLineError {
    fn from(reason: String) -> Self {
        Self::Invalid(reason)
    }
}

/// Runs a program: installs the log (`info` on standard error unless
/// `RUST_LOG` says otherwise, see [`DEFAULT_LOG_LEVEL`](crate::DEFAULT_LOG_LEVEL)),
/// reads its command line with `parse`, then runs it with what that gave.
/// `-h` or `--help` prints `usage` and exits 0; a wrong command line prints
/// `error: reason` and exits 2; a run exits as [`finish`] says.
pub fn run_program<T>(
    usage: &str,
    parse: impl FnOnce(&mut Parser) -> Result<T, CommandLineError>,
    run: impl FnOnce(T) -> Result<(), String>,
) -> ExitCode {
    crate::logging::install();
    match parse(&mut Parser::from_env()) {
        Ok(parsed) => finish(run(parsed)),
        Err(CommandLineError::Help) => {
            print!("{usage}");
            ExitCode::SUCCESS
        }
        Err(CommandLineError::Invalid(reason)) => {
            eprintln!("error: {reason} (--help lists the arguments)");
            ExitCode::from(USAGE_ERROR)
        }
    }
}

/// The answer to an argument a program does not take: help for `-h` and
/// `--help`, an error naming the argument otherwise.
pub fn unexpected(arg: Arg<'_>) -> CommandLineError {
    match arg {
        Arg::Short('h') | Arg::Long("help") => CommandLineError::Help,
        other => other.unexpected().into(),
    }
}

/// Reads a command line that takes no arguments (but `--help`).
pub fn no_arguments(parser: &mut Parser) -> Result<(), CommandLineError> {
    match parser.next()? {
        Some(arg) => Err(unexpected(arg)),
        None => Ok(()),
    }
}

/// The value of `option` (the next argument, or what follows `=`), parsed;
/// otherwise an error naming the option and `what` the value should be.
pub fn value<T: FromStr>(
    parser: &mut Parser,
    option: &str,
    what: &str,
) -> Result<T, CommandLineError> {
    let text = parser.value()?.string()?;
    text.parse()
        .map_err(|_| format!("{option}: {text:?} is not {what}").into())
}

/// The arguments of the server and client programs: addresses and
/// `--seconds N`.
#[derive(Debug, Clone, Default)]
pub struct Args {
    /// The addresses, in order.
    pub positional: Vec<String>,
    /// `--seconds N`: run this long, then exit.
    pub seconds: Option<f64>,
}

impl Args {
    /// Reads `--seconds N` (or `--seconds=N`) and at most `max_positional`
    /// addresses.
    pub fn parse(parser: &mut Parser, max_positional: usize) -> Result<Self, CommandLineError> {
        Self::parse_with(parser, max_positional, |_, _| Ok(false))
    }

    /// As [`Args::parse`], and every other long option goes to `option`
    /// (its name, dashes included, and the parser to read its value from),
    /// which says whether it took it.
    pub fn parse_with(
        parser: &mut Parser,
        max_positional: usize,
        mut option: impl FnMut(&str, &mut Parser) -> Result<bool, CommandLineError>,
    ) -> Result<Self, CommandLineError> {
        let mut parsed = Self::default();
        while let Some(arg) = parser.next()? {
            match arg {
                Arg::Long("seconds") => {
                    let seconds: f64 = value(parser, "--seconds", "a number")?;
                    if !(seconds.is_finite() && seconds > 0.0) {
                        return Err(format!("--seconds: {seconds} is not a positive number").into());
                    }
                    parsed.seconds = Some(seconds);
                }
                Arg::Value(address) if parsed.positional.len() < max_positional => {
                    parsed.positional.push(address.string()?);
                }
                Arg::Long(name) if name != "help" => {
                    let name = format!("--{name}");
                    if !option(&name, parser)? {
                        return Err(lexopt::Error::UnexpectedOption(name).into());
                    }
                }
                other => return Err(unexpected(other)),
            }
        }
        Ok(parsed)
    }

    /// Whether a run is judged in full ([`Tally::verdict`]): always with
    /// `--seconds N`, and when the run ended by itself. An open-ended run
    /// that was `interrupted` did nothing wrong unless a payload was wrong.
    pub fn judged_in_full(&self, interrupted: bool) -> bool {
        self.seconds.is_some() || !interrupted
    }

    /// The verdict on `tally` of a run that was `interrupted` or not, as
    /// [`Args::judged_in_full`] says.
    pub fn verdict(&self, tally: &Tally, interrupted: bool) -> Result<(), String> {
        tally.judge(self.judged_in_full(interrupted))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str], max: usize) -> Result<Args, CommandLineError> {
        Args::parse(&mut Parser::from_args(list), max)
    }

    fn invalid(result: Result<Args, CommandLineError>) -> String {
        match result {
            Err(CommandLineError::Invalid(reason)) => reason,
            other => panic!("not an invalid command line: {other:?}"),
        }
    }

    #[test]
    fn addresses_and_seconds() {
        let a = args(&["127.0.0.1:1", "--seconds", "3"], 1).unwrap();
        assert_eq!(a.positional, ["127.0.0.1:1"]);
        assert_eq!(a.seconds, Some(3.0));
        assert_eq!(args(&["--seconds=2.5"], 0).unwrap().seconds, Some(2.5));
        assert_eq!(args(&[], 2).unwrap().seconds, None);
        assert!(invalid(args(&["--seconds"], 0)).contains("--seconds"));
        assert!(invalid(args(&["--seconds", "-1"], 0)).contains("not a positive number"));
        assert!(invalid(args(&["--seconds", "x"], 0)).contains("\"x\" is not a number"));
        assert!(invalid(args(&["--frobnicate"], 1)).contains("--frobnicate"));
        assert!(invalid(args(&["-x"], 1)).contains("-x"));
        assert!(invalid(args(&["a", "b"], 1)).contains("\"b\""));
    }

    #[test]
    fn help_wins_wherever_it_stands() {
        for list in [&["-h"][..], &["--help"], &["127.0.0.1:1", "--help"]] {
            assert_eq!(args(list, 1).unwrap_err(), CommandLineError::Help);
        }
    }

    #[test]
    fn other_options_go_to_the_program() {
        let mut clients = 0;
        let parsed = Args::parse_with(
            &mut Parser::from_args(["--clients=4", "--seconds", "1"]),
            2,
            |name, parser| {
                if name != "--clients" {
                    return Ok(false);
                }
                clients = value(parser, name, "a count")?;
                Ok(true)
            },
        )
        .unwrap();
        assert_eq!((clients, parsed.seconds), (4, Some(1.0)));
    }

    #[test]
    fn interrupted_runs_are_judged_on_content_only() {
        let open_ended = Args::default();
        let limited = Args {
            seconds: Some(3.0),
            ..Args::default()
        };
        let nothing = Tally::default();
        assert!(open_ended.verdict(&nothing, true).is_ok());
        assert!(open_ended.verdict(&nothing, false).is_err());
        assert!(limited.verdict(&nothing, true).is_err());
        let wrong = Tally {
            bad: 1,
            ..Tally::default()
        };
        assert!(open_ended.verdict(&wrong, true).is_err());
    }
}
