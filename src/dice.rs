//! A dice roller for the table: `2d6+3`, `1d20+1d4-1`, `4d6kh3`, `2d20kl1`, `d20 adv`, `d%`.
//!
//! GMs roll constantly while running a session, and an LLM is a poor random number
//! generator, so rolls are made here and shown with every die visible:
//! `2d6+3: [4, 2] + 3 = 9`, and for keep/drop `4d6kh3: [6, 5, 3, (1)] = 14` (dropped dice in
//! parentheses, dice in the order rolled).
//!
//! Grammar (case-insensitive, spaces ignored): terms joined by `+`/`-`; a term is a constant
//! or `[N]d(M|%)` optionally followed by `khK`/`kK` (keep highest K), `klK` (keep lowest),
//! `dlK` (drop lowest) or `dhK` (drop highest). A trailing `adv`/`advantage` or
//! `dis`/`disadvantage` rolls every single-die term twice and keeps the higher/lower;
//! `adv` alone means `d20 adv`. Limits — at most 1000 dice per expression, 1,000,000 sides,
//! 20 terms — keep a typo from hanging the table, with errors that say which limit.
//!
//! Randomness is injectable ([`DiceRng`]); the default is a SplitMix64 seeded from the clock,
//! which is plenty for games and needs no dependency. Dice are drawn without modulo bias.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// Most dice one expression may roll.
pub(crate) const MAX_DICE: u32 = 1000;
/// Most sides a die may have.
pub(crate) const MAX_SIDES: u32 = 1_000_000;
/// Most terms in one expression.
pub(crate) const MAX_TERMS: usize = 20;
/// Largest constant.
pub(crate) const MAX_CONSTANT: i64 = 1_000_000;

/// Why an expression could not be rolled. Every variant names the expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum DiceError {
    /// Nothing to roll.
    #[error("empty dice expression: try `d20`, `2d6+3` or `4d6kh3`")]
    Empty,
    /// A character or token that does not belong.
    #[error(
        "unexpected `{found}` in `{expr}`: expected something like `2d6+3`, `4d6kh3` or `d20 adv`"
    )]
    Unexpected {
        /// The expression.
        expr: String,
        /// What was found.
        found: String,
    },
    /// Only constants, no dice.
    #[error("`{expr}` has no dice — did you mean `d{expr}`?")]
    NoDice {
        /// The expression.
        expr: String,
    },
    /// Too many dice in total.
    #[error("`{expr}` rolls {count} dice; the limit is {MAX_DICE}")]
    TooManyDice {
        /// The expression.
        expr: String,
        /// How many were asked for.
        count: u64,
    },
    /// A die with too many sides.
    #[error("`{expr}` has a d{sides}; the limit is d{MAX_SIDES}")]
    TooManySides {
        /// The expression.
        expr: String,
        /// Sides asked for.
        sides: u64,
    },
    /// `0dX` or `dX` with zero sides.
    #[error("`{expr}`: {what}")]
    Zero {
        /// The expression.
        expr: String,
        /// "rolls no dice" / "a die needs at least one side".
        what: &'static str,
    },
    /// Keep/drop count out of range.
    #[error("`{expr}`: can't {action} {keep} of {count} dice")]
    BadKeep {
        /// The expression.
        expr: String,
        /// "keep" or "drop".
        action: &'static str,
        /// How many to keep/drop.
        keep: u64,
        /// Dice in the term.
        count: u32,
    },
    /// A constant above [`MAX_CONSTANT`].
    #[error("`{expr}`: the constant {value} is larger than {MAX_CONSTANT}")]
    ConstantTooLarge {
        /// The expression.
        expr: String,
        /// The constant (saturated).
        value: u64,
    },
    /// More than [`MAX_TERMS`] terms.
    #[error("`{expr}` has more than {MAX_TERMS} terms")]
    TooManyTerms {
        /// The expression.
        expr: String,
    },
    /// `adv`/`dis` with no single-die term to apply to.
    #[error("`{expr}`: advantage/disadvantage needs a single die to roll twice, like `d20 adv` or `1d20+5 dis`")]
    AdvantageWithoutSingleDie {
        /// The expression.
        expr: String,
    },
}

/// Source of randomness for rolls.
pub(crate) trait DiceRng {
    /// 64 uniformly random bits.
    fn next_u64(&mut self) -> u64;

    /// One die with `sides` sides (1..=sides), without modulo bias.
    fn roll_die(&mut self, sides: u32) -> u32 {
        let range = u64::from(sides.max(1));
        let zone = u64::MAX - (u64::MAX % range);
        loop {
            let x = self.next_u64();
            if x < zone {
                return (x % range) as u32 + 1;
            }
        }
    }
}

/// SplitMix64: tiny, fast, statistically fine for games.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator with a fixed seed (reproducible rolls, for tests).
    pub(crate) fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// A generator seeded from the clock and a process-wide counter, so two rolls in the
    /// same nanosecond still differ.
    pub(crate) fn from_time() -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        Self::new(
            nanos ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(std::process::id()) << 32,
        )
    }
}

impl DiceRng for SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Which dice of a term count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    /// Keep the N highest.
    Highest(u32),
    /// Keep the N lowest.
    Lowest(u32),
}

/// Advantage or disadvantage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Advantage {
    /// Roll twice, keep the higher.
    Advantage,
    /// Roll twice, keep the lower.
    Disadvantage,
}

/// `NdM` with an optional keep rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DiceTerm {
    /// Number of dice.
    pub count: u32,
    /// Sides per die (100 for `d%`).
    pub sides: u32,
    /// Which dice count toward the total (`None`: all).
    pub keep: Option<Keep>,
    /// Written as `d%`.
    pub percentile: bool,
    /// The count was written (`1d20`) rather than implied (`d20`).
    pub explicit_count: bool,
}

impl DiceTerm {
    #[cfg(test)]
    fn kept_count(&self) -> u32 {
        match self.keep {
            Some(Keep::Highest(n) | Keep::Lowest(n)) => n,
            None => self.count,
        }
    }
}

/// One signed term.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Term {
    /// Dice.
    Dice(DiceTerm),
    /// A constant.
    Constant(i64),
}

/// A parsed, validated expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DiceExpr {
    /// Terms with their sign (+1 or -1).
    pub terms: Vec<(i64, Term)>,
    /// Advantage/disadvantage, already applied to the single-die terms.
    pub advantage: Option<Advantage>,
    /// Indices of terms that advantage turned from one die into two.
    adv_terms: Vec<usize>,
}

/// One rolled die.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Die {
    /// Face rolled.
    pub value: u32,
    /// Whether it counts toward the total.
    pub kept: bool,
}

/// A rolled term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RolledTerm {
    /// Dice, in the order rolled.
    Dice {
        /// +1 or -1.
        sign: i64,
        /// The dice.
        dice: Vec<Die>,
    },
    /// A constant.
    Constant {
        /// +1 or -1.
        sign: i64,
        /// Its value.
        value: i64,
    },
}

/// The result of a roll; `Display` shows every die and the total.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Roll {
    /// The expression, normalised (`2d6+3`, `d20 adv`).
    pub expression: String,
    /// Each term's dice.
    pub terms: Vec<RolledTerm>,
    /// The total.
    pub total: i64,
}

/// Parse and roll with a clock-seeded generator.
pub(crate) fn roll(expr: &str) -> Result<Roll, DiceError> {
    Ok(parse(expr)?.roll(&mut SplitMix64::from_time()))
}

#[cfg(test)]
/// Parse and roll with the given generator.
pub(crate) fn roll_with(expr: &str, rng: &mut dyn DiceRng) -> Result<Roll, DiceError> {
    Ok(parse(expr)?.roll(rng))
}

/// Parse an expression; see the module docs for the grammar.
pub(crate) fn parse(input: &str) -> Result<DiceExpr, DiceError> {
    let shown = input.trim().to_owned();
    let mut s = input.trim().to_lowercase();
    if s.is_empty() {
        return Err(DiceError::Empty);
    }
    let mut advantage = None;
    for (suffix, adv) in [
        ("disadvantage", Advantage::Disadvantage),
        ("advantage", Advantage::Advantage),
        ("adv", Advantage::Advantage),
        ("dis", Advantage::Disadvantage),
    ] {
        if let Some(rest) = s.strip_suffix(suffix) {
            advantage = Some(adv);
            s = rest.trim_end().to_owned();
            break;
        }
    }
    let body = match s.trim() {
        "" if advantage.is_some() => "d20",
        "" => return Err(DiceError::Empty),
        b => b,
    };
    let mut p = Parser {
        chars: body.chars().collect(),
        pos: 0,
        expr: &shown,
    };
    let mut terms = Vec::new();
    let mut sign = 1i64;
    p.skip_ws();
    if p.eat('-') {
        sign = -1;
    } else {
        p.eat('+');
    }
    loop {
        p.skip_ws();
        terms.push((sign, p.term()?));
        if terms.len() > MAX_TERMS {
            return Err(DiceError::TooManyTerms { expr: shown });
        }
        p.skip_ws();
        if p.eat('+') {
            sign = 1;
        } else if p.eat('-') {
            sign = -1;
        } else if p.done() {
            break;
        } else {
            return Err(p.unexpected());
        }
    }
    let total_dice: u64 = terms
        .iter()
        .map(|(_, t)| match t {
            Term::Dice(d) => u64::from(d.count),
            Term::Constant(_) => 0,
        })
        .sum();
    if total_dice == 0 {
        return Err(DiceError::NoDice { expr: shown });
    }
    let mut adv_terms = Vec::new();
    if let Some(adv) = advantage {
        for (i, (_, t)) in terms.iter_mut().enumerate() {
            if let Term::Dice(d) = t {
                if d.count == 1 && d.keep.is_none() {
                    d.count = 2;
                    d.keep = Some(match adv {
                        Advantage::Advantage => Keep::Highest(1),
                        Advantage::Disadvantage => Keep::Lowest(1),
                    });
                    adv_terms.push(i);
                }
            }
        }
        if adv_terms.is_empty() {
            return Err(DiceError::AdvantageWithoutSingleDie { expr: shown });
        }
    }
    let total_dice = total_dice + adv_terms.len() as u64;
    if total_dice > u64::from(MAX_DICE) {
        return Err(DiceError::TooManyDice {
            expr: shown,
            count: total_dice,
        });
    }
    Ok(DiceExpr {
        terms,
        advantage,
        adv_terms,
    })
}

struct Parser<'a> {
    chars: Vec<char>,
    pos: usize,
    expr: &'a str,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn done(&self) -> bool {
        self.pos >= self.chars.len()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_str(&mut self, s: &str) -> bool {
        let n = s.chars().count();
        if self.chars.len() >= self.pos + n
            && self.chars[self.pos..self.pos + n]
                .iter()
                .copied()
                .eq(s.chars())
        {
            self.pos += n;
            true
        } else {
            false
        }
    }

    fn unexpected(&self) -> DiceError {
        let found: String = match self.peek() {
            Some(_) => self.chars[self.pos..].iter().take(8).collect(),
            None => "end of expression".to_owned(),
        };
        DiceError::Unexpected {
            expr: self.expr.to_owned(),
            found,
        }
    }

    /// Digits as a saturating u64, or None if there are none.
    fn number(&mut self) -> Option<u64> {
        let start = self.pos;
        let mut n: u64 = 0;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            n = n.saturating_mul(10).saturating_add(u64::from(d));
            self.pos += 1;
        }
        (self.pos > start).then_some(n)
    }

    fn term(&mut self) -> Result<Term, DiceError> {
        let count = self.number();
        if !self.eat('d') {
            return match count {
                Some(v) if v > MAX_CONSTANT as u64 => Err(DiceError::ConstantTooLarge {
                    expr: self.expr.to_owned(),
                    value: v,
                }),
                Some(v) => Ok(Term::Constant(v as i64)),
                None => Err(self.unexpected()),
            };
        }
        let explicit_count = count.is_some();
        let count = count.unwrap_or(1);
        let (sides, percentile) = if self.eat('%') {
            (100, true)
        } else {
            match self.number() {
                Some(s) => (s, false),
                None => return Err(self.unexpected()),
            }
        };
        let expr = || self.expr.to_owned();
        if count == 0 {
            return Err(DiceError::Zero {
                expr: expr(),
                what: "rolls no dice",
            });
        }
        if count > u64::from(MAX_DICE) {
            return Err(DiceError::TooManyDice {
                expr: expr(),
                count,
            });
        }
        if sides == 0 {
            return Err(DiceError::Zero {
                expr: expr(),
                what: "a die needs at least one side",
            });
        }
        if sides > u64::from(MAX_SIDES) {
            return Err(DiceError::TooManySides {
                expr: expr(),
                sides,
            });
        }
        let count = count as u32;
        let keep_rule = if self.eat_str("kh") {
            Some(("keep", true))
        } else if self.eat_str("kl") {
            Some(("keep", false))
        } else if self.eat_str("dh") {
            Some(("drop", true))
        } else if self.eat_str("dl") {
            Some(("drop", false))
        } else if self.eat('k') {
            Some(("keep", true))
        } else {
            None
        };
        let keep = match keep_rule {
            None => None,
            Some((action, high)) => {
                let n = self.number().unwrap_or(1);
                let bad = || DiceError::BadKeep {
                    expr: self.expr.to_owned(),
                    action,
                    keep: n,
                    count,
                };
                match action {
                    "keep" if n == 0 || n > u64::from(count) => return Err(bad()),
                    "drop" if n >= u64::from(count) => return Err(bad()),
                    _ => {}
                }
                let n = n as u32;
                Some(match (action, high) {
                    ("keep", true) => Keep::Highest(n),
                    ("keep", false) => Keep::Lowest(n),
                    // drop highest n = keep lowest count-n, and vice versa
                    (_, true) => Keep::Lowest(count - n),
                    (_, false) => Keep::Highest(count - n),
                })
            }
        };
        Ok(Term::Dice(DiceTerm {
            count,
            sides: sides as u32,
            keep,
            percentile,
            explicit_count,
        }))
    }
}

impl DiceExpr {
    /// Roll every term.
    pub(crate) fn roll(&self, rng: &mut dyn DiceRng) -> Roll {
        let mut total = 0i64;
        let mut rolled = Vec::with_capacity(self.terms.len());
        for &(sign, term) in &self.terms {
            match term {
                Term::Constant(value) => {
                    total += sign * value;
                    rolled.push(RolledTerm::Constant { sign, value });
                }
                Term::Dice(d) => {
                    let values: Vec<u32> = (0..d.count).map(|_| rng.roll_die(d.sides)).collect();
                    let kept = kept_mask(&values, d.keep);
                    let dice: Vec<Die> = values
                        .iter()
                        .zip(kept)
                        .map(|(&value, kept)| Die { value, kept })
                        .collect();
                    let sum: i64 = dice
                        .iter()
                        .filter(|d| d.kept)
                        .map(|d| i64::from(d.value))
                        .sum();
                    total += sign * sum;
                    rolled.push(RolledTerm::Dice { sign, dice });
                }
            }
        }
        Roll {
            expression: self.to_string(),
            terms: rolled,
            total,
        }
    }

    #[cfg(test)]
    fn bound(&self, want_max: bool) -> i64 {
        self.terms
            .iter()
            .map(|&(sign, t)| match t {
                Term::Constant(v) => sign * v,
                Term::Dice(d) => {
                    let kept = i64::from(d.kept_count());
                    let (lo, hi) = (kept, kept * i64::from(d.sides));
                    match (sign > 0, want_max) {
                        (true, true) | (false, false) => sign * hi,
                        _ => sign * lo,
                    }
                }
            })
            .sum()
    }

    #[cfg(test)]
    /// Smallest possible total.
    pub(crate) fn min_total(&self) -> i64 {
        self.bound(false)
    }

    #[cfg(test)]
    /// Largest possible total.
    pub(crate) fn max_total(&self) -> i64 {
        self.bound(true)
    }
}

/// Which dice count: for keep-highest the N largest, ties broken by roll order.
fn kept_mask(values: &[u32], keep: Option<Keep>) -> Vec<bool> {
    let Some(keep) = keep else {
        return vec![true; values.len()];
    };
    let mut order: Vec<usize> = (0..values.len()).collect();
    let n = match keep {
        Keep::Highest(n) => {
            order.sort_by(|&a, &b| values[b].cmp(&values[a]).then(a.cmp(&b)));
            n
        }
        Keep::Lowest(n) => {
            order.sort_by(|&a, &b| values[a].cmp(&values[b]).then(a.cmp(&b)));
            n
        }
    };
    let mut mask = vec![false; values.len()];
    for &i in order.iter().take(n as usize) {
        mask[i] = true;
    }
    mask
}

impl fmt::Display for DiceExpr {
    /// The normalised expression: `2d6+3`, `4d6kh3`, `d20 adv`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, &(sign, term)) in self.terms.iter().enumerate() {
            if sign < 0 {
                f.write_str("-")?;
            } else if i > 0 {
                f.write_str("+")?;
            }
            match term {
                Term::Constant(v) => write!(f, "{v}")?,
                Term::Dice(d) => {
                    let advantaged = self.adv_terms.contains(&i);
                    let count = if advantaged { 1 } else { d.count };
                    if count != 1 || d.explicit_count {
                        write!(f, "{count}")?;
                    }
                    if d.percentile {
                        f.write_str("d%")?;
                    } else {
                        write!(f, "d{}", d.sides)?;
                    }
                    if !advantaged {
                        match d.keep {
                            Some(Keep::Highest(n)) => write!(f, "kh{n}")?,
                            Some(Keep::Lowest(n)) => write!(f, "kl{n}")?,
                            None => {}
                        }
                    }
                }
            }
        }
        match self.advantage {
            Some(Advantage::Advantage) => f.write_str(" adv"),
            Some(Advantage::Disadvantage) => f.write_str(" dis"),
            None => Ok(()),
        }
    }
}

impl fmt::Display for Roll {
    /// `2d6+3: [4, 2] + 3 = 9`; dropped dice in parentheses.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.expression)?;
        for (i, t) in self.terms.iter().enumerate() {
            let sign = match t {
                RolledTerm::Dice { sign, .. } | RolledTerm::Constant { sign, .. } => *sign,
            };
            match (i, sign < 0) {
                (0, true) => f.write_str("-")?,
                (0, false) => {}
                (_, true) => f.write_str(" - ")?,
                (_, false) => f.write_str(" + ")?,
            }
            match t {
                RolledTerm::Constant { value, .. } => write!(f, "{value}")?,
                RolledTerm::Dice { dice, .. } => {
                    f.write_str("[")?;
                    for (j, d) in dice.iter().enumerate() {
                        if j > 0 {
                            f.write_str(", ")?;
                        }
                        if d.kept {
                            write!(f, "{}", d.value)?;
                        } else {
                            write!(f, "({})", d.value)?;
                        }
                    }
                    f.write_str("]")?;
                }
            }
        }
        write!(f, " = {}", self.total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;

    /// Returns scripted faces in order.
    struct Scripted(Vec<u32>, usize);

    impl DiceRng for Scripted {
        fn next_u64(&mut self) -> u64 {
            0
        }
        fn roll_die(&mut self, sides: u32) -> u32 {
            let v = self.0[self.1 % self.0.len()];
            self.1 += 1;
            assert!(v >= 1 && v <= sides, "scripted {v} out of 1..={sides}");
            v
        }
    }

    fn scripted(faces: &[u32]) -> Scripted {
        Scripted(faces.to_vec(), 0)
    }

    #[rstest]
    #[case("2d6+3", &[4, 2], "2d6+3: [4, 2] + 3 = 9")]
    #[case("4d6kh3", &[6, 5, 3, 1], "4d6kh3: [6, 5, 3, (1)] = 14")]
    #[case("4d6k3", &[1, 5, 3, 6], "4d6kh3: [(1), 5, 3, 6] = 14")]
    #[case("4d6dl1", &[3, 3, 3, 3], "4d6kh3: [3, 3, 3, (3)] = 9")]
    #[case("2d20kl1", &[17, 4], "2d20kl1: [(17), 4] = 4")]
    #[case("1d20+1d4-1", &[12, 3], "1d20+1d4-1: [12] + [3] - 1 = 14")]
    #[case("d20", &[20], "d20: [20] = 20")]
    #[case("D20 + 5", &[7], "d20+5: [7] + 5 = 12")]
    #[case(" 1d20 +1d4 - 1 ", &[12, 3], "1d20+1d4-1: [12] + [3] - 1 = 14")]
    #[case("d20 adv", &[4, 17], "d20 adv: [(4), 17] = 17")]
    #[case("1d20 dis", &[4, 17], "1d20 dis: [4, (17)] = 4")]
    #[case("1d20+5 advantage", &[9, 3], "1d20+5 adv: [9, (3)] + 5 = 14")]
    #[case("d20adv", &[2, 2], "d20 adv: [2, (2)] = 2")]
    #[case("adv", &[11, 15], "d20 adv: [(11), 15] = 15")]
    #[case("d%", &[42], "d%: [42] = 42")]
    #[case("-1d4+10", &[3], "-1d4+10: -[3] + 10 = 7")]
    #[case("3d1", &[1, 1, 1], "3d1: [1, 1, 1] = 3")]
    fn rolls_and_displays(#[case] expr: &str, #[case] faces: &[u32], #[case] shown: &str) {
        let r = roll_with(expr, &mut scripted(faces)).unwrap_or_else(|e| panic!("{expr}: {e}"));
        assert_eq!(r.to_string(), shown);
    }

    #[rstest]
    #[case("", "empty")]
    #[case("   ", "empty")]
    #[case("2d", "unexpected `end of expression`")]
    #[case("2x6", "unexpected `x6`")]
    #[case("2d6+", "unexpected `end of expression`")]
    #[case("2d6 3", "unexpected `3`")]
    #[case("2 d6", "unexpected `d6`")]
    #[case("20", "has no dice — did you mean `d20`?")]
    #[case("1001d6", "the limit is 1000")]
    #[case("600d6+600d6", "rolls 1200 dice")]
    #[case("d1000001", "the limit is d1000000")]
    #[case("0d6", "rolls no dice")]
    #[case("2d0", "at least one side")]
    #[case("4d6kh5", "can't keep 5 of 4 dice")]
    #[case("4d6kh0", "can't keep 0 of 4 dice")]
    #[case("4d6dl4", "can't drop 4 of 4 dice")]
    #[case("2d20 adv", "advantage/disadvantage needs a single die")]
    #[case("d20+9999999", "larger than 1000000")]
    #[case("99999999999999999999999d6", "the limit is 1000")]
    #[case(
        "d20+d20+d20+d20+d20+d20+d20+d20+d20+d20+d20+d20+d20+d20+d20+d20+d20+d20+d20+d20+d20",
        "more than 20 terms"
    )]
    fn parse_errors(#[case] expr: &str, #[case] needle: &str) {
        let err = parse(expr).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains(needle), "{expr:?}: {err}");
    }

    #[rstest]
    #[case("2d6+3", 5, 15)]
    #[case("4d6kh3", 3, 18)]
    #[case("1d20-1d4", -3, 19)]
    #[case("d20 adv", 1, 20)]
    #[case("d%", 1, 100)]
    fn bounds(#[case] expr: &str, #[case] lo: i64, #[case] hi: i64) {
        let e = parse(expr).unwrap_or_else(|err| panic!("{err}"));
        assert_eq!((e.min_total(), e.max_total()), (lo, hi));
    }

    #[test]
    fn seeded_rolls_are_reproducible_and_clock_rolls_work() {
        let a = roll_with("10d20", &mut SplitMix64::new(7)).map(|r| r.total);
        let b = roll_with("10d20", &mut SplitMix64::new(7)).map(|r| r.total);
        assert_eq!(a, b);
        assert!(roll("d20").is_ok_and(|r| (1..=20).contains(&r.total)));
    }

    #[test]
    fn every_face_comes_up() {
        let mut rng = SplitMix64::new(1);
        let mut seen = [false; 6];
        for _ in 0..200 {
            seen[rng.roll_die(6) as usize - 1] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }

    proptest! {
        #[test]
        fn totals_stay_within_bounds(
            seed in any::<u64>(),
            terms in proptest::collection::vec((any::<bool>(), 1u32..8, prop_oneof![Just(1u32), Just(4), Just(6), Just(20), Just(100), 1u32..1000], 0u8..3, 0i64..50), 1..5),
        ) {
            let mut expr = String::new();
            for (i, (neg, n, m, keep, c)) in terms.iter().enumerate() {
                if i > 0 || *neg { expr.push(if *neg { '-' } else { '+' }); }
                expr.push_str(&format!("{n}d{m}"));
                match keep { 1 => expr.push_str(&format!("kh{}", (n / 2).max(1))), 2 => expr.push_str("kl1"), _ => {} }
                if *c > 0 { expr.push_str(&format!("+{c}")); }
            }
            let e = parse(&expr).map_err(|err| TestCaseError::fail(format!("{expr}: {err}")))?;
            let r = e.roll(&mut SplitMix64::new(seed));
            prop_assert!(e.min_total() <= r.total && r.total <= e.max_total(), "{} not in [{}, {}]", r, e.min_total(), e.max_total());
            let shown = r.to_string();
            let reparsed = parse(&r.expression).map_err(|err| TestCaseError::fail(format!("{shown}: {err}")))?;
            prop_assert_eq!((reparsed.min_total(), reparsed.max_total()), (e.min_total(), e.max_total()));
        }

        #[test]
        fn die_faces_in_range(seed in any::<u64>(), sides in 1u32..=MAX_SIDES) {
            let v = SplitMix64::new(seed).roll_die(sides);
            prop_assert!(v >= 1 && v <= sides);
        }

        #[test]
        fn parse_never_panics(s in "\\PC{0,30}") {
            let _ = parse(&s);
        }
    }
}
