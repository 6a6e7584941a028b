//! A headless Chromium driven over the DevTools protocol, for tests that need a real browser.
//!
//! Chromium starts with `--remote-debugging-port=0` and a fresh profile; the port it picked is
//! read from the profile's `DevToolsActivePort`, and one websocket to the browser carries every
//! command, to the page through a flattened target session. Every event is kept, so that a test
//! can assert that no console error or exception occurred.
//!
//! The browser is killed on every path, panics included ([`Drop`]): on Unix it is started in
//! its own process group and the whole group (renderers, GPU and zygote processes) is killed.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::{Message, WebSocket};

/// How long the browser has to start, and to answer any one command.
const PATIENCE: Duration = Duration::from_secs(60);

/// The Chromium to use: `GOLDGATE_CHROMIUM`, else the first of the usual names on `PATH`, else
/// Chrome where macOS and Windows install it. With none, the test fails: only tests ignored
/// for it (`#[ignore = "needs chromium: ..."]`) call this, so a fresh clone passes `cargo test`
/// with only Rust and counts them as ignored, and `.ci/run` (which installs Debian's
/// `chromium`) runs them with `--ignored`.
pub fn find() -> PathBuf {
    if let Some(path) = std::env::var_os("GOLDGATE_CHROMIUM").filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    let names = [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ];
    let on_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default();
    let installed = [
        "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
        r"C:\Program Files\Google\Chrome\Application\chrome.exe",
    ];
    let found = names
        .iter()
        .flat_map(|name| {
            on_path
                .iter()
                .map(move |dir| dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX)))
        })
        .chain(installed.iter().map(PathBuf::from))
        .find(|path| path.is_file());
    found.expect(
        "this test needs a headless Chromium and found none: install it (Debian: \
         `apt-get install -y chromium`, which .ci/run does) or set GOLDGATE_CHROMIUM to a \
         Chromium or Chrome binary",
    )
}

/// A running browser with one page attached.
pub struct Chromium {
    child: Child,
    /// Set once the browser was reaped: its process group id may then name another group.
    exited: bool,
    socket: Option<WebSocket<TcpStream>>,
    session: Option<String>,
    next_id: u64,
    /// Every event received, in order.
    pub events: Vec<Value>,
    log: PathBuf,
    _profile: tempfile::TempDir,
}

impl Chromium {
    /// Starts `binary` headless, writing its own log to `log`.
    pub fn start(binary: &Path, log: &Path) -> Chromium {
        let profile = tempfile::tempdir().expect("a profile folder");
        let mut command = Command::new(binary);
        command
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-extensions",
                "--disable-sync",
                "--no-first-run",
                "--no-default-browser-check",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).expect("the browser's log file"));
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt as _;
            command.process_group(0);
        }
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let mut browser = Chromium {
            child,
            exited: false,
            socket: None,
            session: None,
            next_id: 0,
            events: Vec::new(),
            log: log.to_owned(),
            _profile: profile,
        };
        let (port, path) = browser.devtools_address();
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("the DevTools port");
        stream
            .set_read_timeout(Some(PATIENCE))
            .expect("a read timeout");
        let (socket, _) = tungstenite::client(format!("ws://127.0.0.1:{port}{path}"), stream)
            .expect("a DevTools websocket");
        browser.socket = Some(socket);
        browser
    }

    /// The port and path Chromium wrote into `DevToolsActivePort` once it listens.
    fn devtools_address(&mut self) -> (u16, String) {
        let file = self._profile.path().join("DevToolsActivePort");
        let started = Instant::now();
        loop {
            if let Ok(text) = std::fs::read_to_string(&file) {
                let mut lines = text.lines();
                if let (Some(port), Some(path)) = (lines.next(), lines.next())
                    && let Ok(port) = port.trim().parse()
                {
                    return (port, path.trim().to_owned());
                }
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                self.exited = true;
                panic!("Chromium exited at start ({status}); {}", self.log_tail());
            }
            assert!(
                started.elapsed() < PATIENCE,
                "Chromium did not open its DevTools port within {PATIENCE:?}; {}",
                self.log_tail()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        format!(
            "its log ({}) ends:\n{}",
            self.log.display(),
            lines[lines.len().saturating_sub(20)..].join("\n")
        )
    }

    /// Opens a new page and attaches to it; later commands go to it.
    pub fn open_page(&mut self) {
        let target = self.call("Target.createTarget", json!({ "url": "about:blank" }));
        let session = self.call(
            "Target.attachToTarget",
            json!({ "targetId": target["targetId"], "flatten": true }),
        );
        self.session = Some(
            session["sessionId"]
                .as_str()
                .expect("a session id")
                .to_owned(),
        );
    }

    /// Sends `method` (to the page once one is open) and returns its result; events that
    /// arrive meanwhile are kept. Panics on a protocol error.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = &self.session {
            message["sessionId"] = json!(session);
        }
        let socket = self.socket.as_mut().expect("connected");
        socket
            .send(Message::text(message.to_string()))
            .expect("the command is sent");
        loop {
            let message = self.next_message();
            if message["id"] == id {
                if let Some(error) = message.get("error") {
                    panic!("{method} failed: {error}");
                }
                return message["result"].clone();
            }
            self.events.push(message);
        }
    }

    /// Waits for the event `method`, returning it (it is kept in [`Chromium::events`] too).
    pub fn wait_for(&mut self, method: &str) -> Value {
        if let Some(event) = self.events.iter().find(|e| e["method"] == method) {
            return event.clone();
        }
        loop {
            let message = self.next_message();
            self.events.push(message.clone());
            if message["method"] == method {
                return message;
            }
        }
    }

    fn next_message(&mut self) -> Value {
        let socket = self.socket.as_mut().expect("connected");
        loop {
            match socket.read() {
                Ok(Message::Text(text)) => {
                    return serde_json::from_str(text.as_str()).expect("DevTools sends JSON");
                }
                Ok(_) => continue,
                Err(e) => panic!("reading from DevTools: {e}; {}", self.log_tail()),
            }
        }
    }

    /// Evaluates `expression` in the page and returns its value; panics when it throws.
    pub fn eval(&mut self, expression: &str) -> Value {
        let result = self.call(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
        );
        if let Some(exception) = result.get("exceptionDetails") {
            panic!("`{expression}` threw: {exception}");
        }
        result["result"]["value"].clone()
    }

    /// Errors the page reported: exceptions, `console.error` and `console.assert`, and error
    /// entries of the browser's log (a resource or script the CSP refused, a failed load).
    pub fn errors(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| match e["method"].as_str() {
                Some("Runtime.exceptionThrown") => true,
                Some("Runtime.consoleAPICalled") => {
                    matches!(e["params"]["type"].as_str(), Some("error" | "assert"))
                }
                Some("Log.entryAdded") => e["params"]["entry"]["level"] == "error",
                _ => false,
            })
            .map(|e| e.to_string())
            .collect()
    }

    /// Closes the browser politely and waits for it to hang up; [`Drop`] kills whatever is
    /// left.
    pub fn close(&mut self) {
        self.session = None;
        let Some(socket) = self.socket.as_mut() else {
            return;
        };
        let close = json!({ "id": u64::MAX, "method": "Browser.close" });
        if socket.send(Message::text(close.to_string())).is_ok() {
            let _ = socket
                .get_mut()
                .set_read_timeout(Some(Duration::from_secs(5)));
            while socket.read().is_ok() {}
        }
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        self.socket = None;
        if self.exited {
            return;
        }
        // The group's leader is not reaped yet, so its id cannot name another group.
        #[cfg(unix)]
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
