//! A recording HTTP proxy on loopback between copilot-ls and the real model server: it
//! forwards each request unchanged and keeps what was sent and what came back (status
//! and raw body), so the test can check every exchange of an ask.
//!
//! One request per connection (`Connection: close` on every reply), which copilot-ls's
//! client handles like any server that closes; the body is streamed through as it
//! arrives so server-sent events keep their timing.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const MAX_HEAD_BYTES: usize = 64 * 1024;
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// One request copilot-ls sent and the server's reply.
#[derive(Clone, Debug)]
pub struct Exchange {
    pub method: String,
    pub path: String,
    /// The request body as JSON (`Null` when it was not JSON).
    pub request: Value,
    /// The server's status, or 0 when the proxy could not reach it.
    pub status: u16,
    pub content_type: String,
    pub reply: Vec<u8>,
}

impl Exchange {
    pub fn reply_text(&self) -> String {
        String::from_utf8_lossy(&self.reply).into_owned()
    }
}

pub struct RecordingProxy {
    pub addr: SocketAddr,
    exchanges: Arc<Mutex<Vec<Exchange>>>,
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

impl RecordingProxy {
    /// Listens on 127.0.0.1 (a free port) and forwards to `upstream` (`http://host:port`).
    pub fn start(upstream: &str) -> RecordingProxy {
        let upstream = upstream.trim_end_matches('/').to_string();
        let exchanges = Arc::new(Mutex::new(Vec::new()));
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (shutdown, mut shutdown_rx) = tokio::sync::oneshot::channel::<()>();
        let shared = exchanges.clone();
        thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("proxy runtime");
            runtime.block_on(async move {
                let listener = TcpListener::bind("127.0.0.1:0").await.expect("proxy bind");
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                // Loopback only, and never through a proxy from the environment.
                let client = reqwest::Client::builder()
                    .no_proxy()
                    .build()
                    .expect("proxy client");
                loop {
                    tokio::select! {
                        accepted = listener.accept() => {
                            let Ok((stream, _)) = accepted else { continue };
                            let client = client.clone();
                            let upstream = upstream.clone();
                            let shared = shared.clone();
                            tokio::spawn(async move {
                                forward(stream, &client, &upstream, &shared).await;
                            });
                        }
                        _ = &mut shutdown_rx => return,
                    }
                }
            });
        });
        let addr = addr_rx.recv().expect("proxy address");
        RecordingProxy {
            addr,
            exchanges,
            _shutdown: shutdown,
        }
    }

    /// The base URL to configure copilot-ls with.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every exchange so far, in the order the requests arrived.
    pub fn exchanges(&self) -> Vec<Exchange> {
        self.exchanges.lock().unwrap().clone()
    }
}

struct Request {
    method: String,
    path: String,
    content_type: Option<String>,
    body: Vec<u8>,
}

async fn forward(
    mut stream: TcpStream,
    client: &reqwest::Client,
    upstream: &str,
    shared: &Mutex<Vec<Exchange>>,
) {
    let request = match read_request(&mut stream).await {
        Ok(request) => request,
        Err(reason) => {
            // Recorded so the test fails on it rather than on a confusing client error.
            shared.lock().unwrap().push(Exchange {
                method: String::new(),
                path: String::new(),
                request: Value::Null,
                status: 0,
                content_type: String::new(),
                reply: format!("proxy could not read the request: {reason}").into_bytes(),
            });
            let _ = stream
                .write_all(
                    b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                )
                .await;
            return;
        }
    };
    let index = {
        let mut exchanges = shared.lock().unwrap();
        exchanges.push(Exchange {
            method: request.method.clone(),
            path: request.path.clone(),
            request: serde_json::from_slice(&request.body).unwrap_or(Value::Null),
            status: 0,
            content_type: String::new(),
            reply: Vec::new(),
        });
        exchanges.len() - 1
    };
    let method = reqwest::Method::from_bytes(request.method.as_bytes()).unwrap_or_default();
    let mut outgoing = client
        .request(method, format!("{upstream}{}", request.path))
        .body(request.body);
    if let Some(content_type) = request.content_type {
        outgoing = outgoing.header("content-type", content_type);
    }
    let mut response = match outgoing.send().await {
        Ok(response) => response,
        Err(error) => {
            shared.lock().unwrap()[index].reply = format!("upstream: {error}").into_bytes();
            let _ = stream
                .write_all(
                    b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                )
                .await;
            return;
        }
    };
    let status = response.status();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/octet-stream")
        .to_string();
    {
        let mut exchanges = shared.lock().unwrap();
        exchanges[index].status = status.as_u16();
        exchanges[index].content_type = content_type.clone();
    }
    let head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {content_type}\r\nConnection: close\r\n\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    );
    if stream.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                shared.lock().unwrap()[index]
                    .reply
                    .extend_from_slice(&chunk);
                if stream.write_all(&chunk).await.is_err() {
                    return;
                }
            }
            Ok(None) => break,
            Err(error) => {
                let note = format!("\n[proxy: upstream body failed: {error}]");
                shared.lock().unwrap()[index]
                    .reply
                    .extend_from_slice(note.as_bytes());
                break;
            }
        }
    }
    let _ = stream.shutdown().await;
}

/// Reads one HTTP/1.1 request with a `Content-Length` body (what reqwest sends).
async fn read_request(stream: &mut TcpStream) -> Result<Request, String> {
    let mut buffer = Vec::new();
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        if buffer.len() > MAX_HEAD_BYTES {
            return Err("request head too large".into());
        }
        let mut chunk = [0u8; 8192];
        let n = stream.read(&mut chunk).await.map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("connection closed before the request head ended".into());
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or_default().split(' ');
    let method = first.next().unwrap_or_default().to_string();
    let path = first.next().unwrap_or_default().to_string();
    let mut content_length = 0usize;
    let mut content_type = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => {
                content_length = value.parse().map_err(|_| "bad content-length")?;
            }
            "content-type" => content_type = Some(value.to_string()),
            "transfer-encoding" => return Err(format!("unsupported transfer-encoding {value}")),
            _ => {}
        }
    }
    if content_length > MAX_BODY_BYTES {
        return Err("request body too large".into());
    }
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < content_length {
        let mut chunk = vec![0u8; (content_length - body.len()).min(64 * 1024)];
        let n = stream.read(&mut chunk).await.map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("connection closed inside the request body".into());
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(content_length);
    Ok(Request {
        method,
        path,
        content_type,
        body,
    })
}
