//! The server's engines: a bounded pool of read workers, each its own
//! read-only [`Vine`] (own catalog and trails connections) on a thread with
//! a large stack, and one writer thread that serializes every write. All
//! engines share one [`Tracer`](crate::Tracer), which keeps each caller session's trace
//! apart (the key travels in [`CallCtx`]).
//!
//! Every call carries a [`CallCtx`] with a deadline: long Rust loops check
//! it, dataset SQL stops at it (progress handler), and a watchdog interrupts
//! catalog SQL still running past it. A panic in one call answers
//! `E_INTERNAL` and the worker reopens its engine; a full queue answers
//! `E_BUSY` at once instead of making everyone wait.
//!
//! In: a forest root. Touches: what the engines touch (see `engine`).

use forest_model::ErrorCode;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::InterruptHandle;
use serde_json::{Map, Value};

use crate::engine::{Vine, VineOptions};
use crate::error::{VResult, VineError};

/// Read workers (`FOREST_SERVE_WORKERS` overrides, 1..=32).
pub const READ_WORKERS: usize = 4;
/// Calls waiting per queue before `E_BUSY`.
pub const QUEUE_DEPTH: usize = 64;
/// Deadline of one call (`FOREST_CALL_TIMEOUT_MS` overrides).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(5);
/// Stack of a worker thread (reserved, touched only by deep work).
pub const WORKER_STACK: usize = 64 << 20;
/// Primitives that run on the writer of a writable server.
pub use crate::prims::WRITER_CALLS as WRITES;

/// What travels with one call to a worker. Opaque to the engines; the
/// server fills it per request (the caller's access scope goes here too).
#[derive(Debug, Clone)]
pub struct CallCtx {
    /// The call answers `E_TIMEOUT` once this passes.
    pub deadline: Instant,
    /// Who calls: the rights and branches the call runs with.
    pub access: crate::access::Access,
    /// The caller's session key (its token and MCP session; `""` = the
    /// default session of stdio): traces, session heat and
    /// `close_session` figures are kept per key.
    pub session: String,
}

impl CallCtx {
    /// A context whose deadline is `timeout` from now.
    pub fn with_timeout(timeout: Duration) -> CallCtx {
        CallCtx { deadline: Instant::now() + timeout, access: crate::access::Access::owner(), session: String::new() }
    }
}

impl Default for CallCtx {
    fn default() -> Self {
        CallCtx::with_timeout(call_timeout())
    }
}

/// `FOREST_FUSION` (blend | rrf | bm25): how the served `locate` ranks
/// when a call names no fusion; unset is our default (hybrid whenever the
/// forest has a current canopy). Anything else is refused at start.
pub fn fusion_from_env() -> VResult<forest_catalog::Fusion> {
    match std::env::var("FOREST_FUSION") {
        Err(_) => Ok(forest_catalog::Fusion::default()),
        Ok(v) => forest_catalog::Fusion::parse(v.trim()).ok_or_else(|| {
            crate::error::VineError::schema(format!(
                "FOREST_FUSION expects one of {}, got '{}'",
                forest_catalog::Fusion::NAMES.join(", "),
                v.chars().take(40).collect::<String>()
            ))
        }),
    }
}

/// The configured call deadline.
pub fn call_timeout() -> Duration {
    std::env::var("FOREST_CALL_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map_or(CALL_TIMEOUT, Duration::from_millis)
}

type Reply = tokio::sync::oneshot::Sender<VResult<Value>>;

struct Job {
    prim: String,
    args: Map<String, Value>,
    ctx: CallCtx,
    reply: Reply,
}

/// The running call of one worker, for the watchdog.
type Slot = Arc<Mutex<Option<(Instant, InterruptHandle)>>>;

/// Handle on the workers; dropping it stops them once their queues drain.
pub struct Pool {
    readers: SyncSender<Job>,
    writer: Option<SyncSender<Job>>,
    name: String,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").field("name", &self.name).field("writable", &self.writer.is_some()).finish()
    }
}

fn workers() -> usize {
    std::env::var("FOREST_SERVE_WORKERS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .map_or(READ_WORKERS, |n| n.clamp(1, 32))
}

impl Pool {
    /// Open the engines: the writer first when `writable` (so `E_LOCKED`
    /// surfaces at once), then the read workers. A read-only pool writes
    /// nothing shared (no catalog rows, no heat in `trails.db`).
    pub fn start(root: &Path, writable: bool) -> VResult<Pool> {
        Pool::start_with(root, writable, QUEUE_DEPTH)
    }

    /// [`Pool::start`] with `depth` calls waiting per queue before
    /// `E_BUSY` (at least [`QUEUE_DEPTH`]; a server sizes it above the sum
    /// of its clients' in-flight caps).
    pub fn start_with(root: &Path, writable: bool, depth: usize) -> VResult<Pool> {
        let depth = depth.max(QUEUE_DEPTH);
        let fusion = fusion_from_env()?;
        let first = Vine::open(root, VineOptions { writable, session: None })?;
        let root: PathBuf = first.root().to_path_buf();
        let name = forest_id(&root);
        // A read-only server writes nothing under the forest: no traces.
        let tracer = if writable { first.tracer().clone() } else { first.tracer().clone().without_files() };
        let slots: Vec<Slot> = (0..workers() + 1).map(|_| Arc::new(Mutex::new(None))).collect();
        let (rtx, rrx) = mpsc::sync_channel::<Job>(depth);
        let rrx = Arc::new(Mutex::new(rrx));
        let writer = if writable {
            let (wtx, wrx) = mpsc::sync_channel::<Job>(depth);
            let r2 = root.clone();
            let reopen = move || Vine::open(&r2, VineOptions { writable: true, session: None });
            let t2 = tracer.clone();
            let mut v = Some(first);
            let open = move || {
                let mut vine = match v.take() {
                    Some(x) => x,
                    None => reopen()?,
                };
                vine.tracer = t2.clone();
                vine.set_fusion(fusion);
                Ok(vine)
            };
            spawn("vine-writer", open, Arc::new(Mutex::new(wrx)), slots[0].clone())?;
            Some(wtx)
        } else {
            drop(first);
            None
        };
        for (i, slot) in slots.iter().enumerate().skip(1) {
            let (r2, t2) = (root.clone(), tracer.clone());
            let open = move || {
                Vine::open_worker(&r2, &t2, writable).map(|mut v| {
                    v.set_fusion(fusion);
                    v
                })
            };
            spawn(&format!("vine-read-{i}"), open, rrx.clone(), slot.clone())?;
        }
        watchdog(slots)?;
        Ok(Pool { readers: rtx, writer, name })
    }

    /// The served forest's id.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Run one primitive on a worker (writes on the writer), answering
    /// `E_BUSY` when the queue is full and `E_TIMEOUT` past the deadline.
    pub async fn call(&self, prim: &str, args: Map<String, Value>, ctx: CallCtx) -> VResult<Value> {
        let deadline = ctx.deadline;
        let (reply, rx) = tokio::sync::oneshot::channel();
        let job = Job { prim: prim.to_string(), args, ctx, reply };
        let queue = match (&self.writer, WRITES.contains(&prim)) {
            (Some(w), true) => w,
            _ => &self.readers,
        };
        match queue.try_send(job) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                tracing::warn!(event = "vine.pool_busy", primitive = prim);
                return Err(VineError::new(ErrorCode::Busy, "the server is busy: too many calls in flight")
                    .hint("Retry in a moment; calls are queued up to a fixed depth."));
            }
            Err(TrySendError::Disconnected(_)) => return Err(VineError::internal("engine workers are gone")),
        }
        // Grace after the deadline for the worker to notice and answer.
        let wait = deadline.saturating_duration_since(Instant::now()) + Duration::from_secs(1);
        match tokio::time::timeout(wait, rx).await {
            Ok(Ok(out)) => out,
            Ok(Err(_)) => Err(VineError::internal(format!("{prim}: the engine dropped the call"))),
            Err(_) => Err(crate::engine::timeout(prim)),
        }
    }
}

fn spawn<F>(name: &str, open: F, rx: Arc<Mutex<Receiver<Job>>>, slot: Slot) -> VResult<()>
where
    F: FnMut() -> VResult<Vine> + Send + 'static,
{
    std::thread::Builder::new()
        .name(name.to_string())
        .stack_size(WORKER_STACK)
        .spawn(move || work(open, rx, slot))
        .map(|_| ())
        .map_err(|e| VineError::internal(format!("spawn {name}: {e}")))
}

fn next(rx: &Mutex<Receiver<Job>>) -> Option<Job> {
    rx.lock().unwrap_or_else(|p| p.into_inner()).recv().ok()
}

fn work<F: FnMut() -> VResult<Vine>>(mut open: F, rx: Arc<Mutex<Receiver<Job>>>, slot: Slot) {
    let mut vine = match open() {
        Ok(v) => Some(v),
        Err(e) => {
            tracing::error!(event = "vine.worker_open_failed", error = %e);
            None
        }
    };
    while let Some(job) = next(&rx) {
        if vine.is_none() {
            vine = open().ok();
        }
        let Some(v) = vine.as_mut() else {
            let _ = job.reply.send(Err(VineError::internal("the engine could not be opened")));
            continue;
        };
        if Instant::now() >= job.ctx.deadline {
            let _ = job.reply.send(Err(crate::engine::timeout(&job.prim)));
            continue;
        }
        v.tracer.bind(&job.ctx.session);
        *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some((job.ctx.deadline, v.catalog().interrupt_handle()));
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            v.call_as_until(&job.ctx.access, &job.prim, &job.args, Some(job.ctx.deadline))
        }));
        *slot.lock().unwrap_or_else(|p| p.into_inner()) = None;
        let out = out.unwrap_or_else(|_| {
            tracing::error!(event = "vine.worker_panic", primitive = %job.prim);
            // The engine's state is suspect after a panic: replace it.
            vine = None;
            Err(VineError::internal(format!("{}: internal error (panic)", job.prim)))
        });
        let _ = job.reply.send(out);
    }
}

/// Interrupt catalog SQL of calls past their deadline (every 20 ms).
fn watchdog(slots: Vec<Slot>) -> VResult<()> {
    let weak: Vec<std::sync::Weak<_>> = slots.iter().map(Arc::downgrade).collect();
    drop(slots);
    std::thread::Builder::new()
        .name("vine-watchdog".into())
        .spawn(move || loop {
            std::thread::sleep(Duration::from_millis(20));
            let mut alive = false;
            for w in &weak {
                let Some(s) = w.upgrade() else { continue };
                alive = true;
                let g = s.lock().unwrap_or_else(|p| p.into_inner());
                if let Some((d, h)) = g.as_ref() {
                    if Instant::now() >= *d {
                        h.interrupt();
                    }
                }
            }
            if !alive {
                break;
            }
        })
        .map(|_| ())
        .map_err(|e| VineError::internal(format!("spawn watchdog: {e}")))
}

/// The served forest's id (its directory name).
pub fn forest_id(root: &Path) -> String {
    root.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default()
}
