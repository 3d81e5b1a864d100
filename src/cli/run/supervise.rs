//! Starting the agent and watching it: COMMAND in a process group of its own, its standard
//! output made smart-tee's standard input, the tee run on it as in a pipeline. The log worker
//! tells a [`RunWatch`] of every batch of log lines (the summary read as the events pass: the
//! activity clock, the live totals, the final event); a supervisor thread stops the group when
//! a limit passes (SIGTERM, then SIGKILL after `--kill-after`), passes on the signals smart-tee
//! receives, and, once the agent has exited, stops what is left of its group, so that no
//! process of the run outlives it.

use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

use super::RunOptions;
use super::outcome::{
    AgentExit, Outcome, RunEnd, Stop, outcome_of, summary_json, write_atomically,
};
use super::terminal::Lent;
use crate::read::summary::live::Live;
use crate::tee::watch::{EndCopy, Supervised, Watch};
use crate::tee::{Finish, progress::MakeRender};

/// How often the supervisor looks at the clocks when nothing wakes it.
const TICK: Duration = Duration::from_millis(50);
/// How long the end waits for a group that SIGKILL did not empty (zombies whose parent is gone
/// and not yet reaped).
const GONE_WAIT: Duration = Duration::from_secs(2);
/// How long the agent's output is read after its group has ended, while a process outside the
/// group (one that left it with `setsid`) still holds it open; then, once no input has come for
/// as long (or five times as long has passed) and none waits for the logs, the copy ends
/// without it.
const HELD_WAIT: Duration = Duration::from_secs(2);

/// What the threads of a run share.
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

struct State {
    live: Live,
    /// When the last input that was not a heartbeat arrived.
    last_activity: Instant,
    /// When the last input of any kind was logged.
    last_input: Instant,
    /// Why smart-tee stopped the run, once it did.
    stop: Option<Stop>,
    /// The signal smart-tee received and passed on.
    signalled: Option<i32>,
    /// When SIGTERM went to the group (the kill-after clock), and whether SIGKILL followed.
    term_sent: Option<Instant>,
    killed: bool,
    /// The agent's own end, once reaped.
    agent: Option<AgentExit>,
    /// The agent was killed by a signal that smart-tee did not send (nor pass on).
    killed_unasked: bool,
    /// The tee has read its input to the end.
    tee_done: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The log worker's side: the summary of the run, line by line, and the ceilings.
struct RunWatch {
    shared: Arc<Shared>,
    max_cost: Option<f64>,
    max_output_tokens: Option<u64>,
    /// The activity clock before a line began to arrive in pieces, to go back to if the line
    /// turns out to be a heartbeat.
    before_partial: Option<Instant>,
}

impl Watch for RunWatch {
    fn partial(&mut self) {
        let mut st = self.shared.lock();
        self.before_partial.get_or_insert(st.last_activity);
        st.last_activity = Instant::now();
        st.last_input = st.last_activity;
    }

    fn logged(&mut self, lines: &[u8]) {
        let mut st = self.shared.lock();
        st.last_input = Instant::now();
        let mut progressed = false;
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', lines) {
            let active = st.live.add(&lines[start..end]);
            // The line that was arriving: a heartbeat written in pieces was no activity.
            if let Some(before) = self.before_partial.take()
                && !active
            {
                st.last_activity = before;
            }
            progressed |= active;
            start = end + 1;
        }
        if progressed {
            st.last_activity = Instant::now();
        }
        if st.stop.is_some() {
            return;
        }
        let over = match (self.max_cost, st.live.cost_usd()) {
            (Some(limit), Some(cost)) if cost > limit => Some(Stop::OverCost { limit, cost }),
            _ => None,
        };
        let over = over.or(match (self.max_output_tokens, st.live.output_tokens()) {
            (Some(limit), Some(tokens)) if tokens > limit => {
                Some(Stop::OverTokens { limit, tokens })
            }
            _ => None,
        });
        if over.is_some() {
            st.stop = over;
            self.shared.wake.notify_all();
        }
    }
}

/// Sends `sig` to the process group `pgid`; a group already gone is no error.
fn signal_group(pgid: Pid, sig: Signal) {
    let _ = rustix::process::kill_process_group(pgid, sig);
}

/// True while a process of the group is left.
fn group_alive(pgid: Pid) -> bool {
    rustix::process::test_kill_process_group(pgid).is_ok()
}

/// Starts COMMAND and runs the tee on its output; returns the run's exit status.
pub fn run(opts: RunOptions, render: Option<MakeRender>) -> ExitCode {
    let RunOptions {
        config,
        command,
        stall_after,
        kill_after,
        timeout,
        max_cost,
        max_output_tokens,
        summary_json: summary_path,
        agent_status,
    } = opts;
    let program = crate::door::text(command[0].to_string_lossy().into_owned());
    // Taken over before the agent starts: a signal from now on reaches its group.
    let signals = crate::tee::stopping_signals().ok();
    let mut child = match Command::new(&command[0])
        .args(&command[1..])
        .stdout(Stdio::piped())
        .process_group(0)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            crate::say!("smart-tee run: cannot start {program}: {e}");
            return ExitCode::from(Outcome::Usage.status());
        }
    };
    // The agent leads its own group: the group's id is its pid.
    let Some(pgid) = i32::try_from(child.id()).ok().and_then(Pid::from_raw) else {
        crate::say!("smart-tee run: {program} has no process id to signal");
        let _ = child.kill();
        let _ = child.wait();
        return ExitCode::from(Outcome::Usage.status());
    };
    let terminal = Arc::new(super::terminal::hand_over(pgid));
    // The agent's output is the tee's standard input, read as a pipeline's would be.
    let piped = child.stdout.take().map(OwnedFd::from);
    if let Some(Err(e)) = piped.as_ref().map(rustix::stdio::dup2_stdin) {
        crate::say!("smart-tee run: reading the output of {program}: {e}");
        signal_group(pgid, Signal::KILL);
        let _ = child.wait();
        terminal.give_back();
        return ExitCode::from(1);
    }
    drop(piped);
    let start = Instant::now();
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            live: Live::new(
                max_cost.is_some() || max_output_tokens.is_some() || summary_path.is_some(),
            ),
            last_activity: start,
            last_input: start,
            stop: None,
            signalled: None,
            term_sent: None,
            killed: false,
            agent: None,
            killed_unasked: false,
            tee_done: false,
        }),
        wake: Condvar::new(),
    });
    let reaper = {
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || {
            let exit = child.wait().map(AgentExit::of).unwrap_or_default();
            let mut st = shared.lock();
            st.killed_unasked =
                exit.signal.is_some() && st.term_sent.is_none() && st.signalled.is_none();
            st.agent = Some(exit);
            drop(st);
            shared.wake.notify_all();
        })
    };
    let limits = Limits {
        stall_after,
        timeout,
        kill_after,
        start,
    };
    let end = EndCopy::default();
    let supervisor = {
        let shared = Arc::clone(&shared);
        let end = end.clone();
        let terminal = Arc::clone(&terminal);
        std::thread::spawn(move || supervise(&shared, pgid, &limits, &end, &terminal))
    };
    let on_signal = {
        let shared = Arc::clone(&shared);
        Box::new(move |sig: i32| {
            let mut st = shared.lock();
            st.signalled = Some(sig);
            if let Some(s) = Signal::from_named_raw(sig) {
                signal_group(pgid, s);
            }
            // Ctrl-C may only interrupt the agent's turn: SIGKILL follows the others alone.
            if sig != signal_hook::consts::SIGINT {
                st.term_sent.get_or_insert_with(Instant::now);
            }
            shared.wake.notify_all();
        })
    };
    let watch = Box::new(RunWatch {
        shared: Arc::clone(&shared),
        max_cost,
        max_output_tokens,
        before_partial: None,
    });
    let (finish, failed_before) = crate::tee::run_supervised(
        config,
        render,
        Some(Supervised {
            watch,
            on_signal,
            signals,
            end,
        }),
    );
    // Ended by the supervisor: the agent's group is gone, its output held open by another.
    let ended = finish == Finish::Stopped(EndCopy::STATUS);
    {
        let mut st = shared.lock();
        st.tee_done = true;
        if let Finish::Stopped(_) = finish
            && !ended
        {
            // The tee gave up (an `exit` mode's write error): the agent has no reader left.
            if st.stop.is_none() && st.agent.is_none() {
                st.stop = Some(Stop::OutputFailed);
            }
            st.term_sent.get_or_insert_with(Instant::now);
            signal_group(pgid, Signal::TERM);
        }
    }
    shared.wake.notify_all();
    let _ = supervisor.join();
    let _ = reaper.join();
    terminal.give_back();
    let mut st = shared.lock();
    let log_failed = failed_before || !(ended || matches!(finish, Finish::Done(true)));
    // A format without a final event (Kimi CLI) ends with its process: exit 0 is its success,
    // another status its failure, a signal its death (issue #51).
    let finished = st.live.finished().or_else(|| {
        let agent = st.agent.filter(|_| st.live.format_has_no_final_event())?;
        agent.code.map(|code| code == 0)
    });
    let outcome = outcome_of(st.stop.as_ref(), finished, st.killed_unasked, log_failed);
    let mut status = if agent_status {
        st.agent.unwrap_or_default().shell_status()
    } else if let Some(sig) = st.signalled {
        128 + (sig & 0x7f) as u8
    } else {
        outcome.status()
    };
    if st.signalled.is_none() {
        let by_exit = st.live.finished().is_none() && finished.is_some();
        say_end(outcome, st.agent, finished.is_some(), by_exit, &program);
    }
    if let Some(path) = summary_path {
        let summary = st.live.json_ended();
        let end = RunEnd {
            outcome,
            stop: st.stop.as_ref(),
            agent: st.agent,
            signalled: st.signalled,
            log_failed,
            exit_status: status,
        };
        let json = summary_json(summary, &end);
        if let Err(e) = write_atomically(&path, &json) {
            crate::say!(
                "smart-tee run: --summary-json: writing {}: {e}",
                crate::door::path(&path)
            );
            if status == 0 {
                status = Outcome::LogFailed.status();
            }
        }
    }
    ExitCode::from(status)
}

/// The run's clocks.
struct Limits {
    stall_after: Option<Duration>,
    timeout: Option<Duration>,
    kill_after: Duration,
    start: Instant,
}

/// The supervisor: stops the group when a limit passes, SIGKILLs it `kill_after` after a
/// SIGTERM, stops what is left of the group once the agent has exited, and returns when the
/// agent is reaped, the tee has ended and no process of the group is left. The tee's input is
/// not waited for past [`HELD_WAIT`] once the group has ended: a process outside it may hold
/// it open for ever, and `end` ends the copy then.
fn supervise(shared: &Shared, pgid: Pid, limits: &Limits, end: &EndCopy, terminal: &Lent) {
    let mut st = shared.lock();
    let mut stopped = false;
    let mut gone_since: Option<Instant> = None;
    let mut held_since: Option<Instant> = None;
    loop {
        let now = Instant::now();
        if st.stop.is_none() && st.agent.is_none() {
            if let Some(t) = limits.timeout.filter(|t| now - limits.start >= *t) {
                st.stop = Some(Stop::TimedOut(t));
            } else if let Some(s) = limits
                .stall_after
                .filter(|s| now.saturating_duration_since(st.last_activity) >= *s)
            {
                st.stop = Some(Stop::Stalled(s));
            }
            // After its final event, the agent has only to exit: its verdict stands.
            if st.stop.is_some() && st.live.finished().is_some() {
                st.stop = st.stop.take().map(|s| Stop::Lingered(Box::new(s)));
            }
        }
        if terminal.is_lent() && st.agent.is_none() && stopped_from_terminal(pgid) {
            // Ctrl-Z: the job is smart-tee's, so smart-tee stops too, and the stall clock with
            // it (--timeout counts the time stopped).
            drop(st);
            let paused = Instant::now();
            terminal.suspend(pgid);
            st = shared.lock();
            st.last_activity += paused.elapsed();
        }
        if let Some(stop) = st.stop.as_ref().filter(|_| !stopped) {
            stopped = true;
            crate::say!(
                "smart-tee run: {}: SIGTERM to the agent's process group {}",
                stop.text(),
                pgid.as_raw_nonzero()
            );
            signal_group(pgid, Signal::TERM);
            st.term_sent.get_or_insert(now);
        }
        if st.agent.is_some() && st.term_sent.is_none() && group_alive(pgid) {
            // The agent is gone; what it left in its group goes too.
            signal_group(pgid, Signal::TERM);
            st.term_sent = Some(now);
        }
        if let Some(sent) = st.term_sent.filter(|_| !st.killed)
            && now.saturating_duration_since(sent) >= limits.kill_after
        {
            if group_alive(pgid) {
                crate::say!(
                    "smart-tee run: the agent's process group outlived SIGTERM by {}: SIGKILL",
                    crate::read::summary::live::duration_text(limits.kill_after)
                );
                signal_group(pgid, Signal::KILL);
            }
            st.killed = true;
        }
        if st.agent.is_some() {
            let gone = !group_alive(pgid) || {
                let since = *gone_since.get_or_insert(now);
                st.killed && now.saturating_duration_since(since) >= GONE_WAIT
            };
            if gone && st.tee_done {
                return;
            }
            // Input still coming is read on, for a while.
            let held = held_since.map_or(Duration::ZERO, |h| now.saturating_duration_since(h));
            let quiet =
                now.saturating_duration_since(st.last_input) >= HELD_WAIT || held >= HELD_WAIT * 5;
            if gone && held_since.is_none() {
                held_since = Some(now);
            } else if gone && held >= HELD_WAIT && quiet && end.end() {
                st.tee_done = true;
                crate::say!(
                    "smart-tee run: the agent's output is still held open after its process \
                     group ended, by a process outside the group (one started with setsid?): \
                     the rest of it is not read"
                );
            }
        }
        st = shared
            .wake
            .wait_timeout(st, TICK)
            .map(|(g, _)| g)
            .unwrap_or_else(|e| e.into_inner().0);
    }
}

/// True when the agent (the group's leader) is stopped by a signal (Ctrl-Z on the terminal lent
/// to it, or SIGTTIN/SIGTTOU), as /proc says.
fn stopped_from_terminal(pgid: Pid) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pgid.as_raw_nonzero()));
    // pid (comm) state ...: the state follows the last ')'.
    stat.ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('T'))
        })
        .unwrap_or(false)
}

/// One line on stderr for a run that did not end well on its own.
fn say_end(
    outcome: Outcome,
    agent: Option<AgentExit>,
    finished: bool,
    by_exit: bool,
    program: &str,
) {
    let how = match agent {
        Some(AgentExit { code: Some(c), .. }) => format!("exit status {c}"),
        Some(AgentExit {
            signal: Some(s), ..
        }) => format!("killed by signal {s}"),
        _ => "status unknown".into(),
    };
    match outcome {
        Outcome::Failed if by_exit => crate::say!(
            "smart-tee run: failed: {program} ended with {how} (its format has no final event: \
             its exit tells how the run ended)"
        ),
        Outcome::Failed => {
            crate::say!(
                "smart-tee run: failed: the final event of {program} reports a failure ({how})"
            )
        }
        Outcome::Died if finished => {
            crate::say!("smart-tee run: died: {program} was {how} after its final event")
        }
        Outcome::Died => {
            crate::say!("smart-tee run: died: {program} ended without a final event ({how})")
        }
        _ => {}
    }
}
