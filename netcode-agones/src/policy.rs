//! When a match is over: the rules a server is given (shut down when the
//! last player has gone, and/or a time limit), judged by the game loop
//! from the moment Agones allocated the server.
//!
//! Before allocation nothing ends a match: a `Ready` server waits for
//! players as long as Agones keeps it. "Empty" means that players were
//! there during the match (connected at allocation or since) and none is
//! left; a match whose players never come is ended by the time limit only.

use std::time::{Duration, Instant};

/// How a match ends. The default never ends one (the server runs until
/// Agones stops it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MatchRules {
    /// Shut down once, after allocation, the last player has left.
    pub shutdown_when_empty: bool,
    /// Shut down this long after allocation, players or not.
    pub match_time: Option<Duration>,
}

/// Why a match ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchEnd {
    /// Every player left after the server was allocated
    /// ([`MatchRules::shutdown_when_empty`]).
    Empty,
    /// The time limit since allocation passed ([`MatchRules::match_time`]).
    TimeUp,
}

impl std::fmt::Display for MatchEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Empty => "the last player left",
            Self::TimeUp => "the match time is up",
        })
    }
}

/// The game loop's judge of [`MatchRules`]: told each update what it
/// knows, it says when the match is over.
#[derive(Debug, Clone)]
pub struct MatchTracker {
    rules: MatchRules,
    /// Whether a player was there since allocation.
    had_players: bool,
}

impl MatchTracker {
    /// A tracker of `rules`, before any player.
    pub fn new(rules: MatchRules) -> Self {
        Self {
            rules,
            had_players: false,
        }
    }

    /// The rules it applies.
    pub fn rules(&self) -> MatchRules {
        self.rules
    }

    /// Judges the match at `now`: `allocated_at` is when the server was
    /// seen allocated (`None`: not yet), `connected` the players connected
    /// now, `joined` how many connected since the last call (so that one
    /// who came and went between two calls still counts). The time limit
    /// wins when both rules hold.
    pub fn observe(
        &mut self,
        now: Instant,
        allocated_at: Option<Instant>,
        connected: usize,
        joined: usize,
    ) -> Option<MatchEnd> {
        let allocated_at = allocated_at?;
        self.had_players |= connected > 0 || joined > 0;
        if let Some(limit) = self.rules.match_time
            && now.saturating_duration_since(allocated_at) >= limit
        {
            return Some(MatchEnd::TimeUp);
        }
        (self.rules.shutdown_when_empty && self.had_players && connected == 0)
            .then_some(MatchEnd::Empty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn nothing_ends_before_allocation() {
        let mut t = MatchTracker::new(MatchRules {
            shutdown_when_empty: true,
            match_time: Some(SECOND),
        });
        let start = Instant::now();
        assert_eq!(t.observe(start + 100 * SECOND, None, 0, 1), None);
        assert_eq!(t.observe(start + 100 * SECOND, None, 0, 0), None);
    }

    #[test]
    fn empty_means_players_came_and_went() {
        let mut t = MatchTracker::new(MatchRules {
            shutdown_when_empty: true,
            match_time: None,
        });
        let at = Instant::now();
        // Allocated, nobody there yet: the players are on their way.
        assert_eq!(t.observe(at, Some(at), 0, 0), None);
        assert_eq!(t.observe(at + SECOND, Some(at), 2, 2), None);
        assert_eq!(t.observe(at + 2 * SECOND, Some(at), 1, 0), None);
        assert_eq!(
            t.observe(at + 3 * SECOND, Some(at), 0, 0),
            Some(MatchEnd::Empty)
        );
    }

    #[test]
    fn a_player_there_before_allocation_counts_and_so_does_a_brief_one() {
        let rules = MatchRules {
            shutdown_when_empty: true,
            match_time: None,
        };
        let at = Instant::now();
        let mut t = MatchTracker::new(rules);
        assert_eq!(t.observe(at, None, 1, 1), None);
        assert_eq!(t.observe(at, Some(at), 1, 0), None);
        assert_eq!(t.observe(at, Some(at), 0, 0), Some(MatchEnd::Empty));

        let mut t = MatchTracker::new(rules);
        assert_eq!(t.observe(at, Some(at), 0, 1), Some(MatchEnd::Empty));
    }

    #[test]
    fn the_time_limit_runs_from_allocation() {
        let mut t = MatchTracker::new(MatchRules {
            shutdown_when_empty: false,
            match_time: Some(10 * SECOND),
        });
        let at = Instant::now();
        assert_eq!(t.observe(at + 9 * SECOND, Some(at), 0, 0), None);
        assert_eq!(
            t.observe(at + 10 * SECOND, Some(at), 3, 0),
            Some(MatchEnd::TimeUp)
        );
    }

    #[test]
    fn without_rules_a_match_never_ends() {
        let mut t = MatchTracker::new(MatchRules::default());
        let at = Instant::now();
        assert_eq!(t.observe(at + 1000 * SECOND, Some(at), 0, 5), None);
    }
}
