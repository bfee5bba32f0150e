//! The report's "Modelling assumptions" section: the plan's `[[assumptions]]` as a table
//! of what is assumed, the side it favours and why.

use crate::plan::assumptions::Assumption;
use crate::present::doc::Block;

/// The section's blocks; none when the plan states no assumptions.
pub(crate) fn assumptions_blocks(assumptions: &[Assumption]) -> Vec<Block> {
    if assumptions.is_empty() {
        return Vec::new();
    }
    let rows = assumptions
        .iter()
        .map(|a| vec![a.what.clone(), a.favours.clone(), a.why.clone()])
        .collect();
    vec![
        Block::Heading(2, "Modelling assumptions".into()),
        Block::Para(
            "What the model takes as given, and which side of the comparison each favours \
             (a number that rests on an assumption favouring one side is weighed by it)."
                .into(),
        ),
        Block::Table {
            header: vec!["Assumption".into(), "Favours".into(), "Why".into()],
            rows,
        },
    ]
}
