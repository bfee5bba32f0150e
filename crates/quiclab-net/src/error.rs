//! The crate's error: what failed, with the OS error as its source (so `{:#}` prints
//! "binding 127.0.0.1:4433: Address already in use"), or the application's error.

use std::io;

/// An application's error, handed through [`crate::EndpointDriver::run`] unchanged.
pub type AppError = Box<dyn std::error::Error + Send + Sync>;

/// Why a driver or emulator call failed.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// A socket, event-loop or file operation failed; `what` names it.
    #[error("{what}")]
    Io {
        what: String,
        #[source]
        source: io::Error,
    },
    /// An OS call without more to say than its error (a poll registration, a write).
    #[error(transparent)]
    Os(#[from] io::Error),
    /// The emulator's front and back addresses are of different IP families.
    #[error("--listen and --upstream must both be IPv4 or both IPv6")]
    MixedFamilies,
    /// emulate.json could not be serialized.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// A transport config, URL or option is invalid; the message says which and why.
    #[error("{0}")]
    Config(String),
    /// An interop-runner test case quiclab does not implement (the command line exits
    /// with 127, the runner's "unsupported").
    #[error("test case {0:?} is not supported")]
    UnsupportedTestcase(String),
    /// A connection could not be opened (`to`: the server name and address).
    #[error("connecting to {to}: {why}")]
    Connect { to: String, why: String },
    /// The [`crate::Application`] failed.
    #[error(transparent)]
    Application(AppError),
}

/// The crate's result.
pub type Result<T, E = NetError> = std::result::Result<T, E>;

/// Names the operation an OS error came from.
pub(crate) trait Context<T> {
    fn context(self, what: &str) -> Result<T>;
    fn with_context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> Context<T> for io::Result<T> {
    fn context(self, what: &str) -> Result<T> {
        self.with_context(|| what.to_string())
    }

    fn with_context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| NetError::Io {
            what: what(),
            source,
        })
    }
}
