//! `quiclab._core`: the Rust side of the Python package (python/quiclab). Thin
//! bindings: every number comes from the same code as the `quiclab` CLI
//! (quiclab-sim's `Simulation`, quiclab-lab's plan stages), so results are the CLI's
//! bytes; `transfer` runs real endpoints in-process through quiclab-net. The Python layer (pandas frames, Dask) is in python/quiclab.
//!
//! Every error is raised as `quiclab.QuiclabError` carrying the Rust error's text.

mod net;
mod plan;
mod sim;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use ring::digest::{digest, SHA256};
use std::path::PathBuf;

create_exception!(
    quiclab._core,
    QuiclabError,
    PyException,
    "An error from quiclab (a bad scenario or plan, a failed run, an I/O error); the message is the Rust error's text."
);

/// A Rust error as a `QuiclabError` with its text.
pub(crate) fn py_err(e: impl std::fmt::Display) -> PyErr {
    // Messages can quote input (a TOML parser quotes the offending value, which may be
    // megabytes): bounded here, whatever produced them.
    QuiclabError::new_err(quiclab_sim::excerpt(&e.to_string()).into_owned())
}

/// Fixes the build id in every run key to a hash of this extension's file (the
/// process's executable is the Python interpreter, which says nothing about the
/// quiclab build). `quiclab/__init__.py` calls it with `_core.__file__` on import.
/// Returns the id.
#[pyfunction]
fn _set_code_id(library: PathBuf) -> PyResult<String> {
    let bytes =
        std::fs::read(&library).map_err(|e| py_err(format!("{}: {e}", library.display())))?;
    let id: String = digest(&SHA256, &bytes).as_ref()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    quiclab_lab::plan::expand::set_code_id(id);
    Ok(quiclab_lab::plan::expand::code_id().to_string())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("QuiclabError", m.py().get_type::<QuiclabError>())?;
    m.add_function(wrap_pyfunction!(_set_code_id, m)?)?;
    sim::register(m)?;
    plan::register(m)?;
    net::register(m)?;
    Ok(())
}
