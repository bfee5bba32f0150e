//! Run-time notes of the driver, the emulator and the applications (a connection
//! closed, a body's rate, a socket buffer grown, a new client at the emulator): to
//! stderr, as a process's log; a thread that runs endpoints in-process (the lab, which
//! keeps each endpoint's notes in its run directory, or Python) sends its own notes
//! elsewhere with [`redirect`].

use std::cell::RefCell;
use std::io::Write;
use std::sync::{Arc, Mutex};

/// A thread's note sink, shared with the threads it starts ([`current`]).
type Shared = Arc<Mutex<Box<dyn Write + Send>>>;

thread_local! {
    static SINK: RefCell<Option<Shared>> = const { RefCell::new(None) };
}

/// Sends the calling thread's notes to `sink` from now on (e.g. a file, or
/// `std::io::sink()` to drop them). Other threads keep theirs.
pub fn redirect(sink: Box<dyn Write + Send>) {
    SINK.with(|s| *s.borrow_mut() = Some(Arc::new(Mutex::new(sink))));
}

/// Writes one note line to the calling thread's sink, else stderr. A failed write is
/// dropped: notes never stop a transfer.
pub(crate) fn write(args: std::fmt::Arguments<'_>) {
    current().write(args);
}

/// Where the calling thread's notes go, for a helper thread it starts (the file
/// writer, [`crate::app::file_writer`]) to write its own notes there too.
#[derive(Clone, Default)]
pub(crate) struct Notes(Option<Shared>);

/// The calling thread's notes.
pub(crate) fn current() -> Notes {
    Notes(SINK.with(|s| s.borrow().clone()))
}

impl Notes {
    /// One note line to this sink, else stderr (a failed write is dropped).
    pub(crate) fn write(&self, args: std::fmt::Arguments<'_>) {
        match &self.0 {
            Some(w) => {
                if let Ok(mut w) = w.lock() {
                    let _ = writeln!(w, "{args}");
                    let _ = w.flush();
                }
            }
            None => eprintln!("{args}"),
        }
    }
}

/// `note!(...)`: `eprintln!` through [`write`].
macro_rules! note {
    ($($t:tt)*) => {
        $crate::notes::write(format_args!($($t)*))
    };
}
