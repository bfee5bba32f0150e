//! Log files written off the endpoint's thread: the qlog files ([`super::setup::QlogDir`])
//! and the TLS key log ([`super::setup::FileKeyLog`]).
//!
//! An endpoint that creates or writes a file itself pays for the file system inside the
//! connection it logs: on an ext4 directory that has churned many files, `File::create`
//! (inode allocation) took 1-2 ms between a server's receipt of an Initial and its first
//! flight, and a `BufWriter`'s flush landed inside the client's handshake
//! (docs/PERFORMANCE.md, "Real-host measurement"). Here a [`FileSink`] only formats into
//! its own buffer; file creation and full chunks go to one writer thread per
//! [`FileWriter`] through a bounded channel.
//!
//! Call contract:
//! - [`FileWriter::spawn`] starts the thread (at set-up, not during a connection). The
//!   thread leaves the real-time class if it inherited it: it must never take a CPU
//!   from an endpoint or the emulator.
//! - [`FileWriter::create`] returns at once; the file is created on the thread. A file
//!   that cannot be created (or a failed write) is reported once in the creating
//!   thread's notes ([`crate::notes`]) and its bytes are dropped: logging never stops a
//!   transfer.
//! - A [`FileSink`] hands its bytes over when [`FILE_CHUNK`] have gathered, on
//!   `flush` and when dropped. The channel holds at most [`QUEUE_DEPTH`] messages: a
//!   sender finding it full waits for the thread (memory stays bounded, as with
//!   synchronous writes).
//! - Every [`FileSink`] keeps the writer alive. When the last holder (the
//!   [`FileWriter`] or a sink, in any order) is dropped, it closes the channel and
//!   joins the thread, which first writes everything queued: once every holder is
//!   gone, every byte is in its file. The thread holds no handle itself, so the join
//!   cannot wait on itself.

use crate::notes::{self, Notes};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Bytes a [`FileSink`] gathers before handing them to the thread (a qlog's handshake
/// fits in one, so it reaches the thread when the connection closes or grows).
pub const FILE_CHUNK: usize = 32 << 10;

/// Messages the channel holds before a sender waits: with [`FILE_CHUNK`], at most
/// 2 MiB queued per writer.
pub const QUEUE_DEPTH: usize = 64;

/// What the thread is asked to do, in order.
enum Msg {
    /// Create (truncate) `path` as file `id`.
    Create { id: u64, path: PathBuf },
    /// Write to `file`, opened by the caller, as file `id`.
    Adopt { id: u64, path: PathBuf, file: File },
    /// Append `bytes` to file `id`.
    Write { id: u64, bytes: Vec<u8> },
    /// Close file `id`.
    Close { id: u64 },
    /// Tests: wait until the sender is dropped (a slow disk).
    #[cfg(test)]
    Stall(Receiver<()>),
}

/// What the handles share; dropping the last one stops and joins the thread.
struct Shared {
    tx: Option<SyncSender<Msg>>,
    thread: Option<JoinHandle<()>>,
    next_id: std::sync::atomic::AtomicU64,
}

impl Shared {
    /// Queues `msg` (waiting while the channel is full); false if the thread is gone.
    fn send(&self, msg: Msg) -> bool {
        self.tx.as_ref().is_some_and(|tx| tx.send(msg).is_ok())
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // The channel's only sender: the thread drains what is queued and ends.
        drop(self.tx.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A writer thread for log files (see the module's contract). Clones share the thread.
#[derive(Clone)]
pub struct FileWriter(Arc<Shared>);

impl std::fmt::Debug for FileWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FileWriter")
    }
}

impl FileWriter {
    /// Starts the thread; `what` names the files in notes ("qlog", "key log"). Its
    /// notes go where the calling thread's go.
    pub fn spawn(what: &'static str) -> io::Result<FileWriter> {
        let (tx, rx) = mpsc::sync_channel(QUEUE_DEPTH);
        let notes = notes::current();
        let thread = std::thread::Builder::new()
            .name(format!("{what} writer"))
            .spawn(move || run(rx, what, notes))?;
        Ok(FileWriter(Arc::new(Shared {
            tx: Some(tx),
            thread: Some(thread),
            next_id: Default::default(),
        })))
    }

    /// A sink for a new file at `path`, created (truncated) on the thread.
    pub fn create(&self, path: PathBuf) -> FileSink {
        let id = self.next_id();
        let alive = self.0.send(Msg::Create { id, path });
        self.sink(id, alive)
    }

    /// A sink for `file`, already open (appends go where the file's offset says).
    pub fn adopt(&self, path: PathBuf, file: File) -> FileSink {
        let id = self.next_id();
        let alive = self.0.send(Msg::Adopt { id, path, file });
        self.sink(id, alive)
    }

    fn next_id(&self) -> u64 {
        self.0
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    fn sink(&self, id: u64, alive: bool) -> FileSink {
        FileSink {
            id,
            buf: Vec::new(),
            alive,
            writer: self.0.clone(),
        }
    }

    /// Tests: the thread stops at this point of the queue until the returned sender
    /// is dropped.
    #[cfg(test)]
    fn stall(&self) -> SyncSender<()> {
        let (release, wait) = mpsc::sync_channel(0);
        self.0.send(Msg::Stall(wait));
        release
    }
}

/// One file written by a [`FileWriter`]'s thread: `Write` gathers bytes here; they
/// reach the thread per [`FILE_CHUNK`], on `flush` and on drop (which closes the file).
pub struct FileSink {
    id: u64,
    buf: Vec<u8>,
    /// False once the thread is gone: writes then fail, so a `QlogWriter` stops
    /// formatting.
    alive: bool,
    writer: Arc<Shared>,
}

impl std::fmt::Debug for FileSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FileSink({})", self.id)
    }
}

impl FileSink {
    /// Hands `bytes` to the thread at once, past the buffer (the key log's lines:
    /// whole, in the order of the calls, without waiting for a chunk).
    pub fn send(&self, bytes: Vec<u8>) {
        if self.alive {
            self.writer.send(Msg::Write { id: self.id, bytes });
        }
    }

    /// Hands the gathered bytes to the thread.
    fn hand_over(&mut self) {
        if self.buf.is_empty() || !self.alive {
            return;
        }
        let bytes = std::mem::take(&mut self.buf);
        self.alive = self.writer.send(Msg::Write { id: self.id, bytes });
    }
}

impl Write for FileSink {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if !self.alive {
            return Err(io::Error::other("the file writer thread is gone"));
        }
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= FILE_CHUNK {
            self.hand_over();
        }
        Ok(bytes.len())
    }

    /// Hands the bytes over (no file-system call here; the thread writes them soon).
    fn flush(&mut self) -> io::Result<()> {
        self.hand_over();
        Ok(())
    }
}

impl Drop for FileSink {
    fn drop(&mut self) {
        self.hand_over();
        if self.alive {
            self.writer.send(Msg::Close { id: self.id });
        }
    }
}

/// The thread: leaves the real-time class, then does what it is asked in order until
/// every sender is gone; files still open are closed at the end.
fn run(rx: Receiver<Msg>, what: &'static str, notes: Notes) {
    leave_realtime();
    // `None`: the file could not be created or written; its bytes are dropped.
    let mut files: HashMap<u64, Option<(PathBuf, File)>> = HashMap::new();
    for msg in rx {
        match msg {
            Msg::Create { id, path } => {
                let file = match File::create(&path) {
                    Ok(f) => Some((path, f)),
                    Err(e) => {
                        notes.write(format_args!(
                            "{what}: cannot create {}: {e}",
                            path.display()
                        ));
                        None
                    }
                };
                files.insert(id, file);
            }
            Msg::Adopt { id, path, file } => {
                files.insert(id, Some((path, file)));
            }
            Msg::Write { id, bytes } => {
                let Some(slot) = files.get_mut(&id) else {
                    continue;
                };
                if let Some((path, f)) = slot {
                    if let Err(e) = f.write_all(&bytes) {
                        notes.write(format_args!("{what}: writing {}: {e}", path.display()));
                        *slot = None;
                    }
                }
            }
            Msg::Close { id } => {
                files.remove(&id);
            }
            #[cfg(test)]
            Msg::Stall(wait) => {
                let _ = wait.recv();
            }
        }
    }
}

/// Puts the calling thread in the normal class: a thread inherits its creator's, and
/// an endpoint's thread may be real-time FIFO (the lab's in-process endpoints), where
/// the writer would compete with the endpoints for the CPU. Lowering is always
/// permitted.
fn leave_realtime() {
    // SAFETY: a query about the calling thread.
    let policy = unsafe { libc::sched_getscheduler(0) };
    if policy == libc::SCHED_FIFO || policy == libc::SCHED_RR {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: a plain syscall on the calling thread with a valid sched_param.
        unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &param) };
    }
}

#[cfg(test)]
#[path = "file_writer_tests.rs"]
mod tests;
