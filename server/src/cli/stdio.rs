//! The process's stdout for `serve`: a private handle for the protocol writer, with fd 1
//! itself pointed at stderr, so nothing but protocol frames can reach the editor's pipe.
//!
//! Why: a stray write to fd 1 (a dependency's `println!`, a panic message from a library
//! that prints to stdout, std's line-buffered `Stdout` flushed at exit) would corrupt
//! the stream the editor parses. With fd 1 redirected, such bytes land in the log
//! instead; the only handle on the editor's pipe is owned by the transport's writer.

use std::fs::File;
use std::io;
use std::os::fd::AsFd;

/// Takes the protocol's stdout: returns a new handle on the original fd 1 (close-on-exec)
/// and makes fd 1 a copy of stderr.
pub fn take_protocol_stdout() -> io::Result<File> {
    let protocol = io::stdout().as_fd().try_clone_to_owned()?;
    // SAFETY: dup2 on two descriptors this process has open (0, 1 and 2 are open for
    // any process started by an editor; a failure is reported and changes nothing).
    if unsafe { libc::dup2(libc::STDERR_FILENO, libc::STDOUT_FILENO) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(File::from(protocol))
}
