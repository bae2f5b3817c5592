//! How many asks do their CPU-bound part (retrieval, and the whole of a no-model answer)
//! at once: as many as the machine has cores. Without a bound, 200 concurrent asks share
//! the cores evenly and every one of them is answered at the end; with it they are
//! answered about in the order they came, the first within a few single-ask times. A
//! model ask gives its slot back before it calls the provider, so waiting on the network
//! never holds up the others.
//!
//! Order: an ask takes a number when it arrives (`arrival`, before any await of its
//! front end: the progress round trip and task spawning reorder asks), and when slots
//! are short the lowest number waiting gets the next one. A free slot is never left
//! idle for an ask that has not reached the queue yet; a front end that spawns the ask
//! queues it first (`enqueue`), since spawned tasks start in no set order.

use std::collections::BTreeSet;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use tokio::sync::Notify;

pub struct Slots {
    state: Mutex<State>,
    freed: Notify,
    next: AtomicU64,
}

struct State {
    free: usize,
    /// The arrival numbers of the asks waiting for a slot.
    waiting: BTreeSet<u64>,
}

/// The process's slots, one per core.
pub fn slots() -> &'static Slots {
    static SLOTS: OnceLock<Slots> = OnceLock::new();
    SLOTS.get_or_init(|| Slots::new(std::thread::available_parallelism().map_or(2, |n| n.get())))
}

/// A slot held; dropping it gives it back.
pub struct Slot<'a>(&'a Slots);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.state().free += 1;
        self.0.freed.notify_waiters();
    }
}

/// An ask's place in the queue, from `enqueue` or while `acquire` waits; dropping it
/// leaves the queue (a cancelled ask, or one that got its slot) unless it already has.
pub struct Queued<'a>(&'a Slots, u64);

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        if self.0.state().waiting.remove(&self.1) {
            // The lowest waiter may have been held back by this one.
            self.0.freed.notify_waiters();
        }
    }
}

impl Slots {
    pub fn new(count: usize) -> Slots {
        Slots {
            state: Mutex::new(State {
                free: count.max(1),
                waiting: BTreeSet::new(),
            }),
            freed: Notify::new(),
            next: AtomicU64::new(0),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The number an ask takes when it arrives; lower numbers go first when slots are
    /// short.
    pub fn arrival(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Puts the ask that arrived as `number` in the queue now, for a front end that
    /// hands the ask to a task of its own: spawned tasks start in no set order (tokio
    /// runs the newest first), and an ask must not lose its place to one that arrived
    /// after it but started first. Hold it until the ask ends; nothing between this and
    /// `acquire` may wait on anything but the spawn.
    pub fn enqueue(&self, number: u64) -> Queued<'_> {
        self.state().waiting.insert(number);
        Queued(self, number)
    }

    /// Waits for a slot for the ask that arrived as `number`.
    pub async fn acquire(&self, number: u64) -> Slot<'_> {
        let waiting = self.enqueue(number);
        loop {
            let mut freed = pin!(self.freed.notified());
            // Registered before the check, so a slot freed in between still wakes us.
            freed.as_mut().enable();
            {
                let mut state = self.state();
                if state.free > 0 && state.waiting.first() == Some(&number) {
                    state.free -= 1;
                    drop(state);
                    // Leaving the queue wakes the next waiter, who may take a second
                    // free slot.
                    drop(waiting);
                    return Slot(self);
                }
            }
            freed.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn slots_are_bounded_and_the_earliest_arrival_goes_first() {
        let slots = Slots::new(2);
        let mut held = Vec::new();
        for _ in 0..2 {
            held.push(slots.acquire(slots.arrival()).await);
        }
        // All taken: the next two wait; when one slot is given back the earlier arrival
        // gets it, even though the later one asked first.
        let (early, late) = (slots.arrival(), slots.arrival());
        let mut late = Box::pin(slots.acquire(late));
        assert!(futures::poll!(late.as_mut()).is_pending());
        let mut early = Box::pin(slots.acquire(early));
        assert!(futures::poll!(early.as_mut()).is_pending());
        held.pop();
        let got = early.await;
        assert!(futures::poll!(late.as_mut()).is_pending());
        drop(got);
        late.await;
    }

    #[tokio::test]
    async fn an_ask_queued_early_keeps_its_place_until_it_asks() {
        let slots = Slots::new(1);
        let held = slots.acquire(slots.arrival()).await;
        let (early, late) = (slots.arrival(), slots.arrival());
        let queued = slots.enqueue(early);
        // The later ask reaches `acquire` first, but the slot waits for the earlier one.
        let mut late = Box::pin(slots.acquire(late));
        assert!(futures::poll!(late.as_mut()).is_pending());
        drop(held);
        assert!(futures::poll!(late.as_mut()).is_pending());
        let got = slots.acquire(early).await;
        drop(queued);
        assert!(futures::poll!(late.as_mut()).is_pending());
        drop(got);
        late.await;
    }

    #[tokio::test]
    async fn an_ask_queued_and_dropped_gives_up_its_place() {
        let slots = Slots::new(1);
        let held = slots.acquire(slots.arrival()).await;
        let (early, late) = (slots.arrival(), slots.arrival());
        let queued = slots.enqueue(early);
        let mut late = Box::pin(slots.acquire(late));
        drop(held);
        assert!(futures::poll!(late.as_mut()).is_pending());
        drop(queued);
        late.await;
    }
}
