//! A loopback HTTP server for the tests' agents and fakes.

/// Serves `app` on a free port of 127.0.0.1, on its own thread and runtime, for the rest of
/// the test process: a real loopback agent for `goldgate run --agent-url`.
pub fn serve(app: axum::Router) -> std::net::SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().expect("a runtime for the agent");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("a loopback port");
            tx.send(listener.local_addr().expect("a bound address"))
                .expect("the test waits for the address");
            axum::serve(listener, app).await.expect("the agent serves");
        });
    });
    rx.recv().expect("the agent starts")
}
