//! The TLS settings every HTTP client of a run shares. Reading the system's root certificates
//! means opening a few hundred files, longer than loading a thousand goldens: it is done once a
//! process, and a front end can start it on a thread of its own while it loads goldens.

use std::sync::{Arc, OnceLock};

use rustls::ClientConfig;

static CONFIG: OnceLock<Result<ClientConfig, String>> = OnceLock::new();

/// rustls with the ring provider, verifying servers against the system's root certificates
/// (as reqwest would), HTTP/1.1 only.
pub fn config() -> Result<ClientConfig, String> {
    CONFIG.get_or_init(build).clone()
}

/// Starts reading the root certificates in the background; the first client waits for it.
pub fn prepare() {
    std::thread::spawn(|| {
        let _ = config();
    });
}

fn build() -> Result<ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = rustls_platform_verifier::Verifier::new(Arc::clone(&provider))
        .map_err(|e| format!("cannot read the system's root certificates: {e}"))?;
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}
