//! Running the binary as a one-shot command (the CLI) in a test: both pipes drained at
//! once (a child blocked on a full stderr never closes stdout), and a bound on how long
//! it may take, past which it is killed, so a hang fails the test instead of the suite.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Spawns `command` with stdin closed and both outputs captured; `None` if it has not
/// exited within `limit` (it is killed then).
pub fn run_bounded(mut command: Command, limit: Duration) -> Option<Run> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("spawn the command");
    let pid = child.id();
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let errors = std::thread::spawn(move || {
            let mut stderr = String::new();
            let _ = err.read_to_string(&mut stderr);
            stderr
        });
        let mut stdout = String::new();
        let _ = out.read_to_string(&mut stdout);
        let stderr = errors.join().unwrap_or_default();
        let code = child.wait().ok().and_then(|s| s.code());
        let _ = sender.send(Run {
            code,
            stdout,
            stderr,
        });
    });
    match receiver.recv_timeout(limit) {
        Ok(run) => Some(run),
        Err(_) => {
            // SAFETY: signalling the child this function started, by its pid.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            None
        }
    }
}
