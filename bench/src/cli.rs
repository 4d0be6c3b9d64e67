//! What the bench's programs share on their command line and in their
//! summaries: `--name value` options (`wt-bench`, `history-bench`),
//! criterion's options that the harnessless benches skip, and the median
//! and range of a figure over the rounds.

use std::collections::HashMap;
use std::str::FromStr;

/// `--name value` options, each at most once.
#[derive(Debug)]
pub struct Options(HashMap<String, String>);

impl Options {
    /// Reads `args` (the options after the command's own words); `Err`
    /// names what is wrong.
    pub fn parse(args: &[String]) -> Result<Self, String> {
        let mut map = HashMap::new();
        let mut rest = args.iter();
        while let Some(name) = rest.next() {
            let Some(key) = name.strip_prefix("--") else {
                return Err(format!("expected an --option, found {name}"));
            };
            let Some(value) = rest.next() else {
                return Err(format!("{name} needs a value"));
            };
            if map.insert(key.to_string(), value.clone()).is_some() {
                return Err(format!("{name} given twice"));
            }
        }
        Ok(Self(map))
    }

    /// The option `name` parsed, or `default` when absent; `Err` names an
    /// option that does not parse.
    pub fn get<T: FromStr>(&mut self, name: &str, default: T) -> Result<T, String> {
        match self.0.remove(name) {
            None => Ok(default),
            Some(text) => text
                .parse()
                .map_err(|_| format!("--{name}: cannot read {text:?}")),
        }
    }

    /// `Err` naming any option the command did not ask for.
    pub fn finish(self) -> Result<(), String> {
        match self.0.keys().next() {
            Some(name) => Err(format!("unknown option --{name}")),
            None => Ok(()),
        }
    }
}

/// criterion's options that take a value: `cargo bench -p netcode-bench --
/// ...` passes them to every bench of the crate, and the benches with a
/// harness of their own (`counts`, `udp`) skip them with their value.
pub const CRITERION_VALUED: [&str; 16] = [
    "--measurement-time",
    "--warm-up-time",
    "--sample-size",
    "--noise-threshold",
    "--significance-level",
    "--confidence-level",
    "--nresamples",
    "--save-baseline",
    "--baseline",
    "--baseline-lenient",
    "--load-baseline",
    "--profile-time",
    "--output-format",
    "--plotting-backend",
    "--color",
    "--format",
];

/// The middle value of `values`, or the mean of the two middle ones;
/// `None` when there are none.
pub fn median(values: &[f64]) -> Option<f64> {
    Spread::of(values).map(|s| s.median)
}

/// The median and range of one figure over the rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// The middle value, or the mean of the two middle ones.
    pub median: f64,
    /// The lowest value.
    pub min: f64,
    /// The highest value.
    pub max: f64,
}

impl Spread {
    /// Of `values`; `None` when there are none.
    pub fn of(values: &[f64]) -> Option<Self> {
        if values.is_empty() {
            return None;
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        Some(Self {
            median,
            min: sorted[0],
            max: sorted[n - 1],
        })
    }

    /// `median (min–max)` of `values` with `decimals` decimals; `—` when
    /// there are none.
    pub fn show(values: &[f64], decimals: usize) -> String {
        match Self::of(values) {
            Some(s) => format!(
                "{:.d$} ({:.d$}–{:.d$})",
                s.median,
                s.min,
                s.max,
                d = decimals
            ),
            None => "—".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn options_are_read_once_each_with_defaults() -> Result<(), String> {
        let mut options = Options::parse(&args(&["--rounds", "5", "--label", "idle"]))?;
        assert_eq!(options.get("rounds", 3)?, 5);
        assert_eq!(options.get("label", "run".to_string())?, "idle");
        assert_eq!(options.get("seconds", 3.0)?, 3.0);
        options.finish()
    }

    #[test]
    fn options_name_what_is_wrong() -> Result<(), String> {
        let parse = |words: &[&str]| Options::parse(&args(words)).map(|_| ());
        assert_eq!(
            parse(&["rounds"]),
            Err("expected an --option, found rounds".into())
        );
        assert_eq!(parse(&["--rounds"]), Err("--rounds needs a value".into()));
        assert_eq!(
            parse(&["--rounds", "1", "--rounds", "2"]),
            Err("--rounds given twice".into())
        );
        let mut options = Options::parse(&args(&["--rounds", "x", "--hz", "9"]))?;
        assert_eq!(
            options.get("rounds", 3usize),
            Err("--rounds: cannot read \"x\"".into())
        );
        assert_eq!(options.finish(), Err("unknown option --hz".into()));
        Ok(())
    }

    #[test]
    fn spread_takes_the_median_and_range() {
        assert_eq!(Spread::of(&[]), None);
        let odd = Spread::of(&[3.0, 1.0, 2.0]);
        assert_eq!(
            odd,
            Some(Spread {
                median: 2.0,
                min: 1.0,
                max: 3.0
            })
        );
        assert_eq!(
            Spread::of(&[4.0, 1.0, 2.0, 3.0]).map(|s| s.median),
            Some(2.5)
        );
        assert_eq!(Spread::show(&[1.0, 2.0, 4.0], 1), "2.0 (1.0–4.0)");
        assert_eq!(Spread::show(&[], 1), "—");
        assert_eq!(median(&[5.0, 1.0]), Some(3.0));
        assert_eq!(median(&[]), None);
    }
}
