//! What the process was started with, seen before Rust's runtime changes it.
//!
//! When a process starts with stdout closed (`smart-tee LOG >&-`), Rust's runtime opens
//! `/dev/null` on descriptor 1 before `main`, and from then on a closed stdout cannot be told
//! from a parent's `/dev/null` (Python's `subprocess.DEVNULL` opens it the same way). So the
//! check runs earlier, from the ELF `.init_array` (macOS: `__mod_init_func`), which the C runtime
//! calls before `main`.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// True when descriptor 1 was not open when the process started.
pub fn stdout_was_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

#[allow(
    clippy::disallowed_methods,
    reason = "asks whether descriptor 1 is open; writes nothing"
)]
extern "C" fn check_stdout() {
    // One fcntl system call and an atomic store: nothing here needs the Rust runtime.
    if rustix::io::fcntl_getfd(rustix::stdio::stdout()).is_err() {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
    }
}

// SAFETY: `.init_array` holds functions the C runtime calls once, before `main`, with no
// arguments; `check_stdout` has that signature, reads no state the runtime sets up, allocates
// nothing and cannot unwind (a failing fcntl is an `Err`, not a panic).
#[cfg(any(
    target_os = "linux",
    target_os = "android",
    target_os = "freebsd",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "dragonfly"
))]
#[used]
#[unsafe(link_section = ".init_array")]
static CHECK_STDOUT: extern "C" fn() = check_stdout;

// The same on macOS, whose dynamic loader calls the functions of `__mod_init_func` before `main`.
// SAFETY: as above.
#[cfg(target_vendor = "apple")]
#[used]
#[unsafe(link_section = "__DATA,__mod_init_func")]
static CHECK_STDOUT: extern "C" fn() = check_stdout;
