//! The history's own unit tests: dates and ids as shown, an ask's wait for a first
//! read, a process's finish of it before it exits, and a stopped read.

use super::*;

#[test]
fn dates_are_civil_days_in_utc_and_ids_are_cut_to_ten() {
    assert_eq!(date(0), "1970-01-01");
    assert_eq!(date(951_782_400), "2000-02-29");
    assert_eq!(date(1_700_000_000), "2023-11-14");
    assert_eq!(date(-86_400), "1969-12-31");
    assert_eq!(short_id("0123456789abcdef"), "0123456789");
    assert_eq!(short_id("abc"), "abc");
}

fn options() -> HistoryOptions {
    HistoryOptions {
        enabled: true,
        max_commits: 100,
        read_batch: 10,
    }
}

/// An ask waits for a first read that has written nothing yet or whose pace would end
/// it within the wait, and not for one its pace shows would not (rails: 50,000
/// commits, 6 s).
#[test]
fn an_ask_waits_for_a_short_first_read_and_not_for_a_long_one() {
    let dir = tempfile::tempdir().unwrap();
    let history = History::open(dir.path(), None, options(), |_, _| {});
    assert!(history.pending());
    for (total, written) in [(1_000_000, 0), (2_001, 2_000)] {
        // Nothing written yet, or 2,000 commits a second with one to go: it waits.
        pace(&history, total, written);
        let started = Instant::now();
        assert!(!history.wait_first_read(Duration::from_millis(200)));
        assert!(
            started.elapsed() >= Duration::from_millis(200),
            "it waited for {written} of {total}"
        );
    }
    // 2,000 commits a second with 998,000 to go: not within a minute.
    pace(&history, 1_000_000, 2_000);
    let started = Instant::now();
    assert!(!history.wait_first_read(Duration::from_secs(60)));
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "it did not wait"
    );
}

/// A repository of two commits (kept while the directory lives), and its canonical root.
fn two_commits() -> (tempfile::TempDir, PathBuf) {
    let scratch = tempfile::tempdir().unwrap();
    let repo = copilot_ls_test_support::git_repo::GitRepo::init(
        scratch.path().join("repo"),
        scratch.path().join("home"),
    );
    repo.commit("a.rs", "fn a() {}\n", "Add a");
    repo.commit("b.rs", "fn b() {}\n", "Add b");
    let root = std::fs::canonicalize(&repo.path).unwrap();
    (scratch, root)
}

/// Sets the pace of `history`'s read under way: `written` of `total` commits in a second.
fn pace(history: &History, total: usize, written: usize) {
    let mut reads = lock(&history.reads);
    reads.total = total;
    reads.written = written;
    reads.since = Instant::now().checked_sub(Duration::from_secs(1));
}

/// A stopped history reads nothing more and saves nothing; another reads it all.
#[test]
fn a_stopped_history_reads_and_saves_nothing() {
    let (_scratch, root) = two_commits();
    let stopped = History::open(&root, None, options(), |_, _| {});
    stopped.stop();
    stopped.refresh();
    assert!(stopped.pending());
    assert_eq!(stopped.state().commits, 0);
    let read = History::open(&root, None, options(), |_, _| {});
    read.refresh();
    assert!(!read.pending());
    assert_eq!(read.state().commits, 2);
}

/// A process about to exit finishes a first read that is coming and short (here a real
/// one, on another thread), so the next process has the history; it stops one its pace
/// shows is long, and one that is not coming at all, at once, saying what was left.
#[test]
fn an_exit_finishes_a_short_first_read_and_stops_a_long_one() {
    let (_scratch, root) = two_commits();
    let history = std::sync::Arc::new(History::open(&root, None, options(), |_, _| {}));
    history.expect_read();
    let reader = {
        let history = history.clone();
        std::thread::spawn(move || history.refresh())
    };
    // The bounds are a minute: the read is waited for because it is coming, not because
    // it happened to be quick.
    let minute = Duration::from_secs(60);
    assert_eq!(history.finish_first_read(minute, minute), None);
    assert!(!history.pending());
    assert_eq!(history.state().commits, 2);
    reader.join().unwrap();

    // 2,000 commits a second with 998,000 to go: stopped at once, with what was left.
    let long = History::open(&root, None, options(), |_, _| {});
    long.expect_read();
    pace(&long, 1_000_000, 2_000);
    let started = Instant::now();
    let (commits, left) = long
        .finish_first_read(Duration::from_secs(3), minute)
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "it did not wait"
    );
    assert_eq!(commits, 1_000_000);
    assert!(
        left.is_some_and(|left| left > Duration::from_secs(400)),
        "{left:?}"
    );
    long.refresh();
    assert!(long.pending(), "a stopped history reads nothing more");

    // No read coming or under way: nothing to wait for.
    let idle = History::open(&root, None, options(), |_, _| {});
    let started = Instant::now();
    assert_eq!(idle.finish_first_read(minute, minute), Some((0, None)));
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "it did not wait"
    );
}
