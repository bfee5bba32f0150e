//! Run-time notes of the driver, the emulator and the applications (a connection
//! closed, a body's rate, a socket buffer grown, a new client at the emulator): to
//! stderr, as a process's log; a thread that runs endpoints in-process (the lab, which
//! keeps each endpoint's notes in its run directory, or Python) sends its own notes
//! elsewhere with [`redirect`].

use std::cell::RefCell;
use std::io::Write;

thread_local! {
    static SINK: RefCell<Option<Box<dyn Write>>> = const { RefCell::new(None) };
}

/// Sends the calling thread's notes to `sink` from now on (e.g. a file, or
/// `std::io::sink()` to drop them). Other threads keep theirs.
pub fn redirect(sink: Box<dyn Write>) {
    SINK.with(|s| *s.borrow_mut() = Some(sink));
}

/// Writes one note line to the calling thread's sink, else stderr. A failed write is
/// dropped: notes never stop a transfer.
pub(crate) fn write(args: std::fmt::Arguments<'_>) {
    SINK.with(|s| match &mut *s.borrow_mut() {
        Some(w) => {
            let _ = writeln!(w, "{args}");
            let _ = w.flush();
        }
        None => eprintln!("{args}"),
    });
}

/// `note!(...)`: `eprintln!` through [`write`].
macro_rules! note {
    ($($t:tt)*) => {
        $crate::notes::write(format_args!($($t)*))
    };
}
