//! A scripted HTTP/1.1 server on 127.0.0.1:0: each request gets the next
//! scripted step; it records requests and the peak of concurrent requests.

use forest_curator::{Curator, CuratorConfig};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the server does with one request.
#[derive(Clone, Debug)]
pub enum Step {
    /// Status, extra headers, body.
    Reply(u16, Vec<(String, String)>, String),
    /// Read the request, then say nothing for this long and close.
    Hang(Duration),
    /// Read the request, then close without a reply.
    Close,
}

/// 200 with a chat completion whose content is `content`.
pub fn chat(content: &str) -> Step {
    let body = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]});
    Step::Reply(200, vec![], body.to_string())
}

/// 200 with `{"summary": s, "tags": tags}` as content.
pub fn summary(s: &str, tags: &[&str]) -> Step {
    chat(&json!({"summary": s, "tags": tags}).to_string())
}

/// A status with a plain body.
pub fn status(code: u16, body: &str) -> Step {
    Step::Reply(code, vec![], body.to_string())
}

/// A recorded request.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    /// `messages` of a chat request.
    pub fn messages(&self) -> Vec<Value> {
        self.body["messages"].as_array().cloned().unwrap_or_default()
    }
}

type Responder = Box<dyn Fn(usize, &Request) -> Step + Send + Sync>;

struct State {
    responder: Responder,
    requests: Mutex<Vec<Request>>,
    active: AtomicUsize,
    peak: AtomicUsize,
    delay: Duration,
    stop: AtomicBool,
}

/// Handle of a running scripted server; stops on drop.
pub struct Server {
    addr: std::net::SocketAddr,
    state: Arc<State>,
}

impl Server {
    /// Answer requests with `steps` in order; extra requests get a 599.
    pub fn start(steps: Vec<Step>) -> Server {
        let q = Mutex::new(VecDeque::from(steps));
        Self::with(Duration::ZERO, move |_, _| {
            q.lock().unwrap().pop_front().unwrap_or_else(|| status(599, "script exhausted"))
        })
    }

    /// Answer with a function of (request index, request), holding each
    /// request `delay` before answering.
    pub fn with(delay: Duration, f: impl Fn(usize, &Request) -> Step + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(State {
            responder: Box::new(f),
            requests: Mutex::new(Vec::new()),
            active: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            delay,
            stop: AtomicBool::new(false),
        });
        let st = state.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if st.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let st = st.clone();
                std::thread::spawn(move || handle(conn, &st));
            }
        });
        Server { addr, state }
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.state.requests.lock().unwrap().clone()
    }

    pub fn count(&self) -> usize {
        self.state.requests.lock().unwrap().len()
    }

    /// Highest number of requests being served at once.
    pub fn peak(&self) -> usize {
        self.state.peak.load(Ordering::SeqCst)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr); // wake the accept loop
    }
}

fn read_request(conn: &TcpStream) -> Option<Request> {
    let mut r = BufReader::new(conn.try_clone().ok()?);
    let mut line = String::new();
    r.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut headers = Vec::new();
    let mut len = 0usize;
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().ok()?;
            }
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).ok()?;
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Some(Request { method, path, headers, body })
}

fn handle(mut conn: TcpStream, st: &State) {
    let Some(req) = read_request(&conn) else {
        return;
    };
    let now = st.active.fetch_add(1, Ordering::SeqCst) + 1;
    st.peak.fetch_max(now, Ordering::SeqCst);
    let index = {
        let mut reqs = st.requests.lock().unwrap();
        reqs.push(req.clone());
        reqs.len() - 1
    };
    let step = (st.responder)(index, &req);
    std::thread::sleep(st.delay);
    // A request stops counting as in flight before its reply is written:
    // the client may read it, release its slot and send the next request
    // before this thread runs again, which would overstate the peak.
    match step {
        Step::Reply(code, headers, body) => {
            st.active.fetch_sub(1, Ordering::SeqCst);
            let mut out = format!(
                "HTTP/1.1 {code} Scripted\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            for (k, v) in headers {
                out.push_str(&format!("{k}: {v}\r\n"));
            }
            out.push_str("\r\n");
            out.push_str(&body);
            let _ = conn.write_all(out.as_bytes());
            let _ = conn.flush();
        }
        Step::Hang(d) => {
            std::thread::sleep(d);
            st.active.fetch_sub(1, Ordering::SeqCst);
        }
        Step::Close => {
            st.active.fetch_sub(1, Ordering::SeqCst);
        }
    }
    let _ = conn.shutdown(std::net::Shutdown::Both);
}

/// A fast-failing test config: explicit model (no `/models` call), 2 s
/// timeout, millisecond backoff.
pub fn config(url: &str) -> CuratorConfig {
    let mut c = CuratorConfig::new(url);
    c.model = "test-model".into();
    c.timeout = Duration::from_secs(2);
    c.backoff_base = Duration::from_millis(5);
    c.backoff_max = Duration::from_millis(20);
    c
}

pub fn curator(server: &Server) -> Curator {
    Curator::new(config(&server.url())).unwrap()
}

/// A distinct, plain document body.
pub const BODY: &str = "Quarterly sales ledger for the Lisbon store (Q1, in EUR).\n\n| month | revenue |\n|---|---|\n\
                        | Jan 2026 | 14,302 |\n";
