//! Demand (issue 35): the order in which `forest curate --budget` spends
//! its budget, and the budget itself. Curation and trails are substitutes:
//! where agents keep going (heat, opens) curated scent pays back; where
//! nobody goes the derived scent is enough, so the hottest pending leaves
//! are curated first.
//!
//! A leaf the model was handed before and that kept its derived scent (no
//! candidate passed, or none said more) loses priority with each attempt
//! and, after [`GIVE_UP_AFTER`], waits behind every leaf tried fewer times
//! until its document changes: a hot leaf the model cannot summarise does
//! not take the head of every run's budget.
//!
//! Pure: plain values in, an order out ([`order`]); the I/O that gathers
//! the signals from `_derived/` is [`signals`] (and [`attempts`]).

pub mod attempts;
pub mod signals;

/// Weight of `ln(1 + opens)` next to shared heat (which is in [0, 1]): one
/// open is worth 0.035 heat, ten 0.12, a hundred 0.23. A close of a hunt
/// deposits 0.1 heat on its answers, so heat stays the stronger signal.
pub const OPEN_WEIGHT: f64 = 0.05;

/// Attempts (kept derived at the same derived summary) after which a leaf
/// waits behind every leaf tried fewer times.
pub const GIVE_UP_AFTER: u32 = 3;

/// What is known about one pending leaf's demand.
#[derive(Debug, Clone, PartialEq)]
pub struct Demand {
    /// Node id.
    pub id: String,
    /// Persistent (shared) heat from `_derived/trails.db`, in [0, 1].
    pub heat: f64,
    /// How often the Vine opened it or a hunt answered with it (its trace).
    pub opens: u64,
    /// When its source last changed (unix seconds; 0 when unknown).
    pub changed: f64,
    /// Earlier runs that handed it to the model and kept the derived scent.
    pub attempts: u32,
}

impl Demand {
    /// A leaf nobody has asked for yet.
    pub fn cold(id: impl Into<String>, changed: f64) -> Demand {
        Demand { id: id.into(), heat: 0.0, opens: 0, changed, attempts: 0 }
    }

    /// `heat + OPEN_WEIGHT * ln(1 + opens)`, rounded to 4 decimals (so
    /// equal demand compares equal and recency decides).
    pub fn score(&self) -> f64 {
        let heat = if self.heat.is_finite() { self.heat.clamp(0.0, 1.0) } else { 0.0 };
        let s = heat + OPEN_WEIGHT * (self.opens as f64).ln_1p();
        (s * 10_000.0).round() / 10_000.0
    }

    /// The score shared by `1 + attempts`, rounded to 4 decimals.
    pub fn priority(&self) -> f64 {
        let p = self.score() / f64::from(1 + self.attempts.min(GIVE_UP_AFTER));
        (p * 10_000.0).round() / 10_000.0
    }

    fn given_up(&self) -> bool {
        self.attempts >= GIVE_UP_AFTER
    }
}

/// Leaves tried [`GIVE_UP_AFTER`] times last; otherwise the highest
/// priority (demand shared by attempts) first; equal priority: the most
/// recently changed first; then by id, so the order is a function of the
/// values alone.
pub fn order(mut leaves: Vec<Demand>) -> Vec<Demand> {
    let recency = |d: &Demand| if d.changed.is_finite() { d.changed } else { 0.0 };
    leaves.sort_by(|a, b| {
        a.given_up()
            .cmp(&b.given_up())
            .then(b.priority().total_cmp(&a.priority()))
            .then(recency(b).total_cmp(&recency(a)))
            .then_with(|| a.id.cmp(&b.id))
    });
    leaves
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(id: &str, heat: f64, opens: u64, changed: f64) -> Demand {
        Demand { id: id.into(), heat, opens, changed, attempts: 0 }
    }

    fn tried(mut d: Demand, attempts: u32) -> Demand {
        d.attempts = attempts;
        d
    }

    fn ids(v: Vec<Demand>) -> Vec<String> {
        order(v).into_iter().map(|d| d.id).collect()
    }

    #[test]
    fn hottest_first_then_opens_then_recency_then_id() {
        let got = ids(vec![
            d("cold-old", 0.0, 0, 100.0),
            d("cold-new", 0.0, 0, 200.0),
            d("opened", 0.0, 3, 0.0),
            d("hot", 0.6, 0, 0.0),
            d("warm", 0.2, 0, 0.0),
            d("b-tie", 0.0, 0, 200.0),
        ]);
        assert_eq!(got, ["hot", "warm", "opened", "b-tie", "cold-new", "cold-old"]);
    }

    #[test]
    fn heat_outweighs_a_few_opens_and_many_opens_outweigh_a_trace_of_heat() {
        // A hunt's close (0.1) beats one open (0.035)...
        assert_eq!(ids(vec![d("opened-once", 0.0, 1, 0.0), d("answered", 0.1, 0, 0.0)]), ["answered", "opened-once"]);
        // ...and a hundred opens beat a decayed deposit.
        assert_eq!(ids(vec![d("dust", 0.05, 0, 0.0), d("busy", 0.0, 100, 0.0)]), ["busy", "dust"]);
        // Heat and opens add up.
        assert_eq!(ids(vec![d("heat", 0.3, 0, 0.0), d("both", 0.3, 1, 0.0)]), ["both", "heat"]);
    }

    #[test]
    fn the_order_is_deterministic_and_bad_values_count_as_nothing() {
        let a = vec![d("x", f64::NAN, 0, f64::NAN), d("y", 0.0, 0, 0.0), d("w", 7.0, 0, 0.0), d("v", 1.0, 0, 0.0)];
        let mut b = a.clone();
        b.reverse();
        assert_eq!(ids(a), ids(b));
        // Heat above 1 is capped (the store caps it too): `v` and `w` tie on
        // demand and recency, so the id decides; NaN is cold.
        assert_eq!(ids(vec![d("x", f64::NAN, 0, 0.0), d("w", 7.0, 0, 0.0), d("v", 1.0, 0, 0.0)]), ["v", "w", "x"]);
        // Scores that differ below 4 decimals tie, and recency decides.
        assert_eq!(ids(vec![d("a", 0.30001, 0, 1.0), d("b", 0.3, 0, 2.0)]), ["b", "a"]);
    }

    #[test]
    fn attempts_that_kept_the_derived_scent_lower_a_leaf_and_three_send_it_to_the_back() {
        // Tried once, a hot leaf still leads a warm one; twice, it falls behind.
        let v = vec![tried(d("hot", 0.9, 0, 0.0), 1), d("warm", 0.4, 0, 0.0)];
        assert_eq!(ids(v), ["hot", "warm"]);
        let v = vec![tried(d("hot", 0.9, 0, 0.0), 2), d("warm", 0.4, 0, 0.0)];
        assert_eq!(ids(v), ["warm", "hot"]);
        // Given up: behind even a cold leaf never tried.
        let v = vec![tried(d("hot", 1.0, 50, 9.0), GIVE_UP_AFTER), d("cold", 0.0, 0, 0.0)];
        assert_eq!(ids(v), ["cold", "hot"]);
        // Among the given-up, demand still orders.
        let v = vec![tried(d("a", 0.2, 0, 0.0), 5), tried(d("b", 0.8, 0, 0.0), 3)];
        assert_eq!(ids(v), ["b", "a"]);
    }
}
