//! The transaction mix as a deck of cards (TPC-C 5.2.4.2): each terminal shuffles a deck
//! holding each transaction type as many times as its weight and deals it out, then
//! shuffles again, so the mix holds exactly over every deck rather than on average.

use rand::seq::SliceRandom;
use rand::Rng;

/// The five transactions, in the specification's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Txn {
    NewOrder,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
}

impl Txn {
    pub(crate) const ALL: [Txn; 5] = [
        Txn::NewOrder,
        Txn::Payment,
        Txn::OrderStatus,
        Txn::Delivery,
        Txn::StockLevel,
    ];

    /// The name reports use (operations.csv, the per-type table).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Txn::NewOrder => "new_order",
            Txn::Payment => "payment",
            Txn::OrderStatus => "order_status",
            Txn::Delivery => "delivery",
            Txn::StockLevel => "stock_level",
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// One terminal's deck.
pub(crate) struct Deck {
    cards: Vec<Txn>,
    next: usize,
}

impl Deck {
    /// A deck of `weights[t]` cards of each type (in `Txn::ALL`'s order); at least one card.
    pub(crate) fn new(weights: [u32; 5]) -> Deck {
        let cards = (Txn::ALL.iter().zip(weights))
            .flat_map(|(t, w)| std::iter::repeat_n(*t, w as usize))
            .collect::<Vec<_>>();
        assert!(
            !cards.is_empty(),
            "invariant: the weights were checked to sum to 100"
        );
        Deck {
            next: cards.len(),
            cards,
        }
    }

    /// The next card; a fresh shuffle when the deck is dealt out.
    pub(crate) fn deal(&mut self, rng: &mut impl Rng) -> Txn {
        if self.next == self.cards.len() {
            self.cards.shuffle(rng);
            self.next = 0;
        }
        self.next += 1;
        self.cards[self.next - 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    #[test]
    fn every_deck_holds_the_weights_exactly() {
        let mut rng = SmallRng::seed_from_u64(11);
        let mut deck = Deck::new([45, 43, 4, 4, 4]);
        for _ in 0..3 {
            let mut n = [0u32; 5];
            for _ in 0..100 {
                n[deck.deal(&mut rng).index()] += 1;
            }
            assert_eq!(n, [45, 43, 4, 4, 4]);
        }
    }

    #[test]
    fn a_zero_weight_never_comes_up() {
        let mut rng = SmallRng::seed_from_u64(2);
        let mut deck = Deck::new([0, 100, 0, 0, 0]);
        assert!((0..250).all(|_| deck.deal(&mut rng) == Txn::Payment));
    }
}
