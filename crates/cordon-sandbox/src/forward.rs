//! The in-sandbox forwarder: listens on `127.0.0.1:PORT` inside the empty network
//! namespace and relays each TCP connection to the egress proxy's Unix socket, which is
//! bound into the sandbox. It decides nothing: the proxy outside does. It runs in its
//! own process (threads are fine here, the namespaces already exist), never in the
//! command's.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

fn pump(mut from: impl Read, mut to: impl Write) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
}

fn relay(tcp: TcpStream, socket: &Path) {
    let Ok(unix) = UnixStream::connect(socket) else {
        // The proxy is gone: the client sees a reset, which is the truth.
        return;
    };
    let (Ok(tcp_r), Ok(unix_w)) = (tcp.try_clone(), unix.try_clone()) else {
        return;
    };
    let up = std::thread::spawn(move || {
        pump(tcp_r, &unix_w);
        let _ = unix_w.shutdown(Shutdown::Write);
    });
    pump(&unix, &tcp);
    let _ = tcp.shutdown(Shutdown::Write);
    let _ = up.join();
}

/// Accept forever, one thread per connection.
pub(crate) fn serve(listener: TcpListener, socket: PathBuf) -> ! {
    loop {
        match listener.accept() {
            Ok((tcp, _)) => {
                let socket = socket.clone();
                std::thread::spawn(move || relay(tcp, &socket));
            }
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
        }
    }
}
