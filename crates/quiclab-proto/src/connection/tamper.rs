//! A test hook: rewriting a side's encoded transport parameters (see
//! [`with_tampered_transport_parameters`]).

use crate::wire::Side;
use std::cell::RefCell;

/// Rewrites a side's encoded transport parameters (see
/// [`with_tampered_transport_parameters`]).
type Tamper = (Side, Box<dyn Fn(&mut Vec<u8>)>);

thread_local! {
    static TAMPER: RefCell<Option<Tamper>> = const { RefCell::new(None) };
}

/// Runs `f`; every connection of `side` created meanwhile on this thread (a client by
/// `Pair::new` or `Endpoint::connect`, a server when a pair step delivers the first
/// Initial) hands TLS its encoded transport parameters (RFC 9000 §18) as `edit`
/// rewrote them, so a test can send parameters our encoder never produces.
pub fn with_tampered_transport_parameters<R>(
    side: Side,
    edit: impl Fn(&mut Vec<u8>) + 'static,
    f: impl FnOnce() -> R,
) -> R {
    /// Restores the previous hook, also when `f` panics.
    struct Restore(Option<Tamper>);
    impl Drop for Restore {
        fn drop(&mut self) {
            TAMPER.with(|t| *t.borrow_mut() = self.0.take());
        }
    }
    let previous = TAMPER.with(|t| t.borrow_mut().replace((side, Box::new(edit))));
    let _restore = Restore(previous);
    f()
}

/// Applies the hook of [`with_tampered_transport_parameters`], if one is set for `side`.
pub(super) fn tamper_transport_parameters(side: Side, encoded: &mut Vec<u8>) {
    TAMPER.with(|t| {
        if let Some((s, edit)) = t.borrow().as_ref() {
            if *s == side {
                edit(encoded);
            }
        }
    });
}
