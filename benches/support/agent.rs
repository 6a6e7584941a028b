//! The benchmark's agent: a blocking HTTP/1.1 server with a thread per connection, as a plain
//! agent process would be. Each turn's thread sleeps until the turn's deadline and answers, so
//! the time the agent holds a turn is the chosen latency plus one sleep's overshoot; an async
//! server that hands the sleep to a blocking pool wakes two more threads a turn (about 0.2 ms
//! on a two-core VM), and that would be charged to the runner being measured.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use goldgate::agent::protocol::TurnRequest;

/// Time the agent spent on turns (from a request's last byte read to its reply's written),
/// summed, and how many turns.
#[derive(Default)]
pub struct Held {
    nanos: AtomicU64,
    turns: AtomicU64,
}

impl Held {
    /// The mean time per turn since the last call, then starts over.
    pub fn take_mean(&self) -> Duration {
        let nanos = self.nanos.swap(0, Ordering::Relaxed);
        let turns = self.turns.swap(0, Ordering::Relaxed).max(1);
        Duration::from_nanos(nanos / turns)
    }

    fn add(&self, held: Duration) {
        let nanos = u64::try_from(held.as_nanos()).unwrap_or(u64::MAX);
        self.nanos.fetch_add(nanos, Ordering::Relaxed);
        self.turns.fetch_add(1, Ordering::Relaxed);
    }
}

/// A running agent: where it listens and how long it has held turns.
pub struct LoopbackAgent {
    pub addr: SocketAddr,
    pub held: Arc<Held>,
}

/// Starts an agent on 127.0.0.1 that answers every `POST` with `body` (JSON) after `latency`,
/// for the rest of the process.
pub fn start(latency: Duration, body: Vec<u8>) -> LoopbackAgent {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let addr = listener.local_addr().expect("a bound address");
    let held = Arc::new(Held::default());
    let turn = Arc::new(Answer {
        latency,
        body,
        held: Arc::clone(&held),
    });
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let stream = stream.expect("a connection");
            let turn = Arc::clone(&turn);
            std::thread::spawn(move || turn.serve(stream));
        }
    });
    LoopbackAgent { addr, held }
}

struct Answer {
    latency: Duration,
    body: Vec<u8>,
    held: Arc<Held>,
}

impl Answer {
    /// Answers the requests of one keep-alive connection until the client closes it.
    fn serve(&self, stream: TcpStream) {
        stream.set_nodelay(true).expect("TCP_NODELAY");
        let mut writer = stream.try_clone().expect("a second handle");
        let mut reader = BufReader::new(stream);
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            self.body.len()
        );
        while let Some(request) = read_request(&mut reader) {
            let started = Instant::now();
            // The runner must send what an agent expects: a malformed turn fails the bench.
            serde_json::from_slice::<TurnRequest>(&request).expect("a valid turn request");
            if let Some(left) = self.latency.checked_sub(started.elapsed()) {
                std::thread::sleep(left);
            }
            writer
                .write_all(&[head.as_bytes(), &self.body].concat())
                .expect("the reply is sent");
            self.held.add(started.elapsed());
        }
    }
}

/// The body of the next request on the connection; `None` once the client has closed it.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Vec<u8>> {
    let mut length = 0;
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().expect("a numeric content-length");
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(body)
}
