//! The session targets' clocks: monotonic time (an `Instant`, as the core
//! takes it) and the wall clock (unix seconds), moved by sane steps or set
//! to whatever the input asks for: huge steps, zero steps, steps back, the
//! end of time (`Instant::MAX`), any wall clock. Whether monotonic time
//! ever went back is recorded: the targets' final checks assume it did not.

use std::time::Duration;

use netcode_proto::Instant;

use crate::Cursor;

/// Monotonic time and the wall clock of one input.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    /// Monotonic time.
    pub now: Instant,
    /// Unix time, in seconds.
    pub unix: u64,
    /// The part of a second monotonic time moved that the wall clock has
    /// not taken yet.
    carry: Duration,
    /// Whether `now` was ever set earlier than it was.
    pub went_back: bool,
}

impl Clock {
    /// Clocks at `now` and `unix`.
    pub fn new(now: Instant, unix: u64) -> Self {
        Self {
            now,
            unix,
            carry: Duration::ZERO,
            went_back: false,
        }
    }

    /// Both clocks forward by `dt` (the wall clock by whole seconds, the
    /// rest carried), saturating.
    pub fn step(&mut self, dt: Duration) {
        self.now = self.now.saturating_add(dt);
        let total = self.carry.saturating_add(dt);
        self.unix = self.unix.saturating_add(total.as_secs());
        self.carry = Duration::from_nanos(u64::from(total.subsec_nanos()));
    }

    /// Sets monotonic time alone.
    fn set_now(&mut self, now: Instant) {
        self.went_back |= now < self.now;
        self.now = now;
    }

    /// Moves the clocks as the input says. A byte (mod 16) picks how:
    ///
    /// * 0 to 7: a sane step of a byte times 100 ms (0 to 25.5 s, so zero
    ///   steps too);
    /// * 8: a step of a `u64` of nanoseconds (up to 584 years);
    /// * 9: a step of a `u64` of seconds (saturating at `Instant::MAX`);
    /// * 10: to a `u16` of nanoseconds before `Instant::MAX`;
    /// * 11: back by a `u32` of milliseconds;
    /// * 12: back to zero;
    /// * 13: to any time (`u64` seconds, `u32` nanoseconds mod 10^9);
    /// * 14: the wall clock alone, to any `u64`;
    /// * 15: the wall clock alone, back by a `u16` of seconds.
    pub fn jump(&mut self, input: &mut Cursor<'_>) {
        match input.u8() % 16 {
            0..=7 => self.step(Duration::from_millis(u64::from(input.u8()) * 100)),
            8 => self.step(Duration::from_nanos(input.u64())),
            9 => self.step(Duration::from_secs(input.u64())),
            10 => {
                let before = Duration::from_nanos(u64::from(input.u16()));
                self.set_now(Instant::MAX.saturating_sub(before));
            }
            11 => {
                let back = Duration::from_millis(u64::from(input.u32()));
                self.set_now(self.now.saturating_sub(back));
            }
            12 => self.set_now(Instant::ZERO),
            13 => {
                let secs = input.u64();
                self.set_now(Instant::from_duration(Duration::new(
                    secs,
                    input.u32() % 1_000_000_000,
                )));
            }
            14 => self.unix = input.u64(),
            _ => self.unix = self.unix.saturating_sub(u64::from(input.u16())),
        }
    }
}
