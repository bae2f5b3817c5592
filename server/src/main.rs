//! The `copilot-ls` binary: sets up the allocator, then hands off to the command line
//! layer.

/// mimalloc, for Rust and for tree-sitter's C alike. An index build allocates and frees
/// from several threads at once (analysis, tantivy's indexing threads, the parser's
/// stacks), and glibc's malloc, held to two arenas to bound its resident set, spent
/// about 13% of a cold build's CPU in its own locks and bookkeeping. Measured side by
/// side in docs/benchmarks.md ("mimalloc").
#[cfg(unix)]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    #[cfg(unix)]
    allocator::configure();
    copilot_ls::cli::main()
}

/// mimalloc's options, and tree-sitter pointed at it.
#[cfg(unix)]
mod allocator {
    use libmimalloc_sys as mi;

    /// mimalloc's option numbers (`mi_option_e` in its mimalloc.h, version 3, the one
    /// the sys crate builds), which the crate names only for version 2.
    const ARENA_EAGER_COMMIT: mi::mi_option_t = 4;
    const PURGE_DELAY: mi::mi_option_t = 15;

    /// Freed memory goes back to the system at once, and arenas are committed as they
    /// are used. mimalloc's defaults (purge after 10 ms, commit whole arenas) build
    /// faster still, but a thread that frees memory and then waits (tantivy's indexing
    /// threads after a build, the runtime's workers) never purges it: a server idle
    /// after building wagtail's index held 81 MB against glibc's 43 MB; with these
    /// options 44 MB. An arena's commit mode is read when it is reserved, which the
    /// first allocation does, before `main`: so on Linux these are set by a load-time
    /// constructor (`.init_array` entries run before the Rust runtime allocates),
    /// elsewhere first thing in `main`.
    extern "C" fn set_options() {
        // SAFETY: options are plain integers that mimalloc reads when it next needs them.
        unsafe {
            mi::mi_option_set(PURGE_DELAY, 0);
            mi::mi_option_set(ARENA_EAGER_COMMIT, 0);
        }
    }

    #[cfg(target_os = "linux")]
    #[used]
    #[link_section = ".init_array"]
    static SET_OPTIONS: extern "C" fn() = set_options;

    /// The options where no constructor set them; then tree-sitter's allocations go to
    /// mimalloc too (its parser allocates a stack array at every reduction, through its
    /// own allocator functions, glibc's malloc unless told otherwise). Called first,
    /// before any thread starts or any tree is parsed.
    pub fn configure() {
        #[cfg(not(target_os = "linux"))]
        set_options();
        // SAFETY: the four functions are mimalloc's C allocation functions, and no tree
        // exists yet that another allocator would have to free.
        unsafe {
            copilot_ls::syntax::set_allocator(
                mi::mi_malloc,
                mi::mi_calloc,
                mi::mi_realloc,
                mi::mi_free,
            );
        }
    }

    #[cfg(all(test, target_os = "linux"))]
    mod tests {
        use std::sync::mpsc;

        fn resident_mb() -> usize {
            let status = std::fs::read_to_string("/proc/self/status").unwrap();
            let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
            line.split_whitespace()
                .nth(1)
                .unwrap()
                .parse::<usize>()
                .unwrap()
                / 1024
        }

        /// What an idle server depends on: a thread that frees what it allocated and
        /// then only waits (as tantivy's indexing threads do after a build) does not
        /// keep it.
        #[test]
        fn memory_freed_by_a_thread_that_then_waits_goes_back_to_the_system() {
            let before = resident_mb();
            let (freed_sender, freed) = mpsc::channel();
            let (finish, finish_receiver) = mpsc::channel::<()>();
            let thread = std::thread::spawn(move || {
                let blocks: Vec<Box<[u8; 96]>> =
                    (0..1_000_000).map(|_| Box::new([1; 96])).collect();
                let held = resident_mb();
                drop(blocks);
                freed_sender.send(held).unwrap();
                finish_receiver.recv().unwrap();
            });
            let held = freed.recv().unwrap();
            let after = resident_mb();
            finish.send(()).unwrap();
            thread.join().unwrap();
            assert!(
                held >= before + 90,
                "the blocks were resident: {before} -> {held} MB"
            );
            assert!(
                after <= before + 20,
                "{before} MB before, {held} held, {after} after freeing"
            );
        }
    }
}
