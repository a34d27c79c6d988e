package dev.idempotency.jdbc;

import java.io.FilterInputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.SocketFactory;

/**
 * A socket factory for pgjdbc's and MariaDB Connector/J's {@code socketFactory} URL option that counts round trips
 * on the wire: a round trip is the first read from the server after the client wrote something. Whatever the driver
 * sends in one go (several protocol messages, a pipelined prepare and execute, {@code BEGIN} piggybacked on the
 * first statement) is one round trip, and a call that sends nothing (a client-side {@code getAutoCommit}) is none:
 * this is what the client waits for, which no JDBC-level wrapper can tell. Both drivers create their socket with
 * {@link #createSocket()} and connect it themselves; TLS, if any, is layered over this socket and so counted too.
 *
 * <p>One counter for every socket of this factory in the JVM: a test reads it around the work it measures, on a
 * data source whose only connections come from here.
 */
public final class CountingSocketFactory extends SocketFactory {

    private static final AtomicLong ROUND_TRIPS = new AtomicLong();

    /** Round trips so far, over every socket this factory made. */
    static long roundTrips() {
        return ROUND_TRIPS.get();
    }

    @Override
    public Socket createSocket() {
        return new CountingSocket();
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        Socket s = createSocket();
        s.connect(new java.net.InetSocketAddress(host, port));
        return s;
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
        throw new UnsupportedOperationException("the drivers connect the socket themselves");
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
        Socket s = createSocket();
        s.connect(new java.net.InetSocketAddress(host, port));
        return s;
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort) {
        throw new UnsupportedOperationException("the drivers connect the socket themselves");
    }

    private static final class CountingSocket extends Socket {
        /** Whether the client wrote since its last read: the next read waits for the server's answer. */
        private volatile boolean wrote;
        private InputStream in;
        private OutputStream out;

        @Override
        public synchronized InputStream getInputStream() throws IOException {
            if (in == null) {
                in = new FilterInputStream(super.getInputStream()) {
                    @Override
                    public int read() throws IOException {
                        answered();
                        return super.read();
                    }

                    @Override
                    public int read(byte[] b, int off, int len) throws IOException {
                        answered();
                        return super.read(b, off, len);
                    }
                };
            }
            return in;
        }

        @Override
        public synchronized OutputStream getOutputStream() throws IOException {
            if (out == null) {
                out = new FilterOutputStream(super.getOutputStream()) {
                    @Override
                    public void write(int b) throws IOException {
                        wrote = true;
                        out().write(b);
                    }

                    @Override
                    public void write(byte[] b, int off, int len) throws IOException {
                        if (len > 0) {
                            wrote = true;
                        }
                        out().write(b, off, len);
                    }

                    private OutputStream out() {
                        return this.out;
                    }
                };
            }
            return out;
        }

        private void answered() {
            if (wrote) {
                wrote = false;
                ROUND_TRIPS.incrementAndGet();
            }
        }
    }
}
