//! The TLS settings every HTTP client of a run shares. The system's root certificates (a few
//! hundred files, longer to read than a thousand goldens) are read once a process, and only
//! when a server's certificate is first verified: a run against a plain-HTTP or command agent,
//! without a judge, never reads them.

use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use rustls_platform_verifier::Verifier;

static CONFIG: OnceLock<Result<ClientConfig, String>> = OnceLock::new();

/// rustls with the ring provider, verifying servers against the system's root certificates
/// (as reqwest would), HTTP/1.1 only.
pub fn config() -> Result<ClientConfig, String> {
    CONFIG.get_or_init(build).clone()
}

fn build() -> Result<ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = SystemRoots {
        provider: Arc::clone(&provider),
        verifier: OnceLock::new(),
    };
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// The platform's verifier, made when the first certificate is to be verified. A handshake's
/// signatures are checked with the provider's algorithms, as that verifier checks them, without
/// the roots.
#[derive(Debug)]
struct SystemRoots {
    provider: Arc<CryptoProvider>,
    verifier: OnceLock<Result<Verifier, String>>,
}

impl SystemRoots {
    fn verifier(&self) -> Result<&Verifier, rustls::Error> {
        self.verifier
            .get_or_init(|| {
                Verifier::new(Arc::clone(&self.provider)).map_err(|error| {
                    let why = match error {
                        rustls::Error::General(why) => why,
                        other => other.to_string(),
                    };
                    format!(
                        "cannot read the system's root certificates ({why}): install them (the \
                         ca-certificates package) or name a PEM file of them in SSL_CERT_FILE"
                    )
                })
            })
            .as_ref()
            .map_err(|message| rustls::Error::General(message.clone()))
    }
}

impl ServerCertVerifier for SystemRoots {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.verifier()?.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        )
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
