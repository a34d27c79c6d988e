package dev.idempotency.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on the loopback between the Redis client and the shared Redis server, which the tests own: they cut it
 * (every connection closed, new ones refused, as when Redis is killed), stall it (connections stay open, nothing
 * is forwarded, as a Redis that does not answer) and restore it, without touching the server other engineers use.
 */
final class TcpProxy implements AutoCloseable {

    private final String targetHost;
    private final int targetPort;
    private final int port;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile ServerSocket server;
    private volatile boolean stalled;

    TcpProxy(String targetHost, int targetPort) throws IOException {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        this.server = bind(0);
        this.port = server.getLocalPort();
        accept(server);
    }

    int port() {
        return port;
    }

    /** Redis killed: open connections closed, new ones refused. */
    synchronized void cut() throws IOException {
        server.close();
        closeAll();
    }

    /** Redis hanging: connections stay open, and what is sent is held (not lost) until {@link #restore()}. */
    void stall() {
        stalled = true;
    }

    /** Redis back, on the same port. */
    synchronized void restore() throws IOException {
        stalled = false;
        if (server.isClosed()) {
            server = bind(port);
            accept(server);
        }
    }

    @Override
    public synchronized void close() throws IOException {
        server.close();
        closeAll();
    }

    private void closeAll() {
        for (Socket s : sockets) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
        sockets.clear();
    }

    private static ServerSocket bind(int port) throws IOException {
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        return s;
    }

    private void accept(ServerSocket listening) {
        Thread t = new Thread(() -> {
            while (!listening.isClosed()) {
                try {
                    Socket client = listening.accept();
                    sockets.add(client);
                    Socket upstream = new Socket(targetHost, targetPort);
                    sockets.add(upstream);
                    pump(client, upstream);
                    pump(upstream, client);
                } catch (IOException e) {
                    // the listening socket was closed (cut): stop accepting
                }
            }
        }, "tcp-proxy-accept-" + port);
        t.setDaemon(true);
        t.start();
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[8192];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    while (stalled && !from.isClosed()) {
                        Thread.sleep(2); // held: a Redis that does not answer
                    }
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // cut
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                try {
                    from.close();
                    to.close();
                } catch (IOException ignored) {
                    // closing anyway
                }
            }
        }, "tcp-proxy-pump");
        t.setDaemon(true);
        t.start();
    }
}
