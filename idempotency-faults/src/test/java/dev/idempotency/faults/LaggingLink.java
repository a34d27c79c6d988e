package dev.idempotency.faults;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.TimeUnit;

/**
 * The network between an asynchronous standby and its primary, with a lag: a TCP relay on a local port that passes
 * what the primary sends on to the standby {@code lag} later (what the standby sends back goes at once). {@link #cut}
 * closes every connection at once, and what was still on the way is lost, as the WAL on a wire is when the primary
 * dies: the standby then holds everything but the last {@code lag} of the primary's commits.
 */
final class LaggingLink implements AutoCloseable {

    private record Chunk(long due, byte[] bytes) implements Delayed {
        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(due - System.nanoTime(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed o) {
            return Long.compare(due, ((Chunk) o).due);
        }
    }

    private final ServerSocket server;
    private final int target;
    private final long lagNanos;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean cut;

    LaggingLink(int port, int target, Duration lag) {
        this.target = target;
        this.lagNanos = lag.toNanos();
        try {
            this.server = new ServerSocket(port, 8, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + port + " for the standby's link", e);
        }
        Thread acceptor = new Thread(this::accept, "lagging-link-" + port);
        acceptor.setDaemon(true);
        acceptor.start();
    }

    private void accept() {
        while (!cut) {
            try {
                Socket standby = server.accept();
                Socket primary = new Socket(InetAddress.getLoopbackAddress(), target);
                sockets.add(standby);
                sockets.add(primary);
                DelayQueue<Chunk> onTheWire = new DelayQueue<>();
                daemon(() -> read(primary, onTheWire), "link-read");
                daemon(() -> deliver(onTheWire, standby), "link-deliver");
                daemon(() -> pass(standby, primary), "link-back");
            } catch (IOException e) {
                return; // closed: cut or closed
            }
        }
    }

    private void read(Socket from, DelayQueue<Chunk> onTheWire) {
        byte[] buffer = new byte[64 * 1024];
        try (InputStream in = from.getInputStream()) {
            for (int n; (n = in.read(buffer)) > 0; ) {
                onTheWire.add(new Chunk(System.nanoTime() + lagNanos, Arrays.copyOf(buffer, n)));
            }
        } catch (IOException e) {
            // the connection is gone
        }
    }

    private void deliver(DelayQueue<Chunk> onTheWire, Socket to) {
        try (OutputStream out = to.getOutputStream()) {
            while (!cut) {
                Chunk c = onTheWire.poll(100, TimeUnit.MILLISECONDS);
                if (c != null && !cut) {
                    out.write(c.bytes());
                    out.flush();
                }
            }
        } catch (IOException e) {
            // the connection is gone
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void pass(Socket from, Socket to) {
        byte[] buffer = new byte[16 * 1024];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            for (int n; (n = in.read(buffer)) > 0; ) {
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // the connection is gone
        }
    }

    private static void daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    /** Drops every connection at once, and what was on the way. */
    void cut() {
        cut = true;
        close();
    }

    @Override
    public void close() {
        cut = true;
        try {
            server.close();
        } catch (IOException e) {
            // closing
        }
        for (Socket s : sockets) {
            try {
                s.setSoLinger(true, 0); // a reset, not an orderly close: nothing more is delivered
                s.close();
            } catch (IOException e) {
                // closing
            }
        }
    }
}
