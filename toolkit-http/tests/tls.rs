//! The configuration speaks TLS and checks the server's certificate:
//! against a real TLS server on 127.0.0.1 whose certificate is
//! self-signed, the handshake stops at the certificate, as an error of the
//! request, and the server hears why.
//!
//! The certificate (for `localhost` and `127.0.0.1`, valid until 2126) and
//! its key were made once with openssl for this test alone.

use std::net::TcpListener;
use std::sync::Arc;

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

const CERTIFICATE: &[u8] = include_bytes!("data/self-signed.der");
const KEY: &[u8] = include_bytes!("data/self-signed.key.der");

/// Answers one TLS handshake on a free port of 127.0.0.1; the thread
/// returns how the handshake ended.
fn tls_server() -> (u16, std::thread::JoinHandle<Result<(), rustls::Error>>) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(KEY.to_vec()));
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring's protocol versions")
        .with_no_client_auth()
        .with_single_cert(vec![CertificateDer::from(CERTIFICATE.to_vec())], key)
        .expect("the fixture's certificate and key");
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let port = listener.local_addr().expect("an address").port();
    let handshake = std::thread::spawn(move || {
        let (mut socket, _) = listener.accept().expect("a connection");
        let mut connection =
            rustls::ServerConnection::new(Arc::new(config)).expect("a server connection");
        while connection.is_handshaking() {
            match connection.complete_io(&mut socket) {
                Ok((0, 0)) => break,
                Ok(_) => {}
                Err(error) => {
                    return match error.into_inner() {
                        Some(inner) => match inner.downcast::<rustls::Error>() {
                            Ok(tls) => Err(*tls),
                            Err(other) => panic!("not a TLS error: {other}"),
                        },
                        None => panic!("the connection failed outside TLS"),
                    };
                }
            }
        }
        Ok(())
    });
    (port, handshake)
}

#[tokio::test]
async fn a_certificate_no_root_vouches_for_is_refused() {
    let (port, handshake) = tls_server();
    let client = toolkit_http::client_builder()
        .expect("the TLS configuration")
        .build()
        .expect("a client");
    let error = client
        .get(format!("https://127.0.0.1:{port}/"))
        .send()
        .await
        .expect_err("a self-signed certificate");
    let mut chain = Vec::new();
    let mut source: Option<&dyn std::error::Error> = Some(&error);
    while let Some(error) = source {
        chain.push(error.to_string());
        source = error.source();
    }
    let chain = chain.join(": ");
    assert!(chain.contains("invalid peer certificate"), "{chain}");
    // The client told the server why it stopped: the handshake got as far
    // as the certificate, over TLS.
    let ended = handshake.join().expect("the server thread");
    assert!(
        matches!(ended, Err(rustls::Error::AlertReceived(_))),
        "{ended:?}"
    );
}
