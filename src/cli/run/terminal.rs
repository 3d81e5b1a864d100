//! The terminal during a run: with a terminal on standard input, the agent's process group is
//! made its foreground group, so that the agent can read it and Ctrl-C reaches it; afterwards
//! smart-tee's own group gets it back.

use std::os::fd::OwnedFd;

use rustix::process::{Pid, Signal};

/// The terminal lent to the agent's group, to give back at the end.
pub struct Lent {
    tty: Option<OwnedFd>,
}

/// Makes `pgid` the foreground group of the terminal on standard input, if there is one and
/// smart-tee's group holds it.
pub fn hand_over(pgid: Pid) -> Lent {
    let stdin = rustix::stdio::stdin();
    let ours = rustix::process::getpgrp();
    if !rustix::termios::isatty(stdin) || rustix::termios::tcgetpgrp(stdin).ok() != Some(ours) {
        return Lent { tty: None };
    }
    // A descriptor of its own: descriptor 0 becomes the agent's output.
    let Ok(tty) = rustix::io::dup(stdin) else {
        return Lent { tty: None };
    };
    if rustix::termios::tcsetpgrp(&tty, pgid).is_err() {
        return Lent { tty: None };
    }
    // An agent that read the terminal before it was its own was stopped (SIGTTIN): go on.
    let _ = rustix::process::kill_process_group(pgid, Signal::CONT);
    Lent { tty: Some(tty) }
}

impl Lent {
    /// True when a terminal was lent.
    pub fn is_lent(&self) -> bool {
        self.tty.is_some()
    }

    /// The agent's group was stopped from the terminal (Ctrl-Z): smart-tee's group takes the
    /// terminal back and stops itself, so that the shell sees its job stopped; once continued
    /// (`fg`), the terminal is lent to `pgid` again and its group continued.
    pub fn suspend(&self, pgid: Pid) {
        let Some(tty) = self.tty.as_ref() else { return };
        self.give_back();
        let _ = rustix::process::kill_process_group(rustix::process::getpgrp(), Signal::STOP);
        // Continued.
        let _ = rustix::termios::tcsetpgrp(tty, pgid);
        let _ = rustix::process::kill_process_group(pgid, Signal::CONT);
    }

    /// Gives the terminal back to smart-tee's group. Done from a thread that blocks SIGTTOU:
    /// a background group that sets the foreground is otherwise stopped by it.
    pub fn give_back(&self) {
        let Some(tty) = self.tty.as_ref() else { return };
        let Ok(tty) = tty.try_clone() else { return };
        let _ = std::thread::spawn(move || {
            crate::tee::block_in_this_thread(nix::sys::signal::Signal::SIGTTOU);
            let _ = rustix::termios::tcsetpgrp(&tty, rustix::process::getpgrp());
        })
        .join();
    }
}
