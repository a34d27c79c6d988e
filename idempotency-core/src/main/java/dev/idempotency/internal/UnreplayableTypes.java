package dev.idempotency.internal;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Return types whose values cannot be recorded and replayed, by class name, each with the reason. Internal: shared by
 * the result codec (run time, {@code checkReplayable}) and the annotation processor (compile time), which sees
 * names, not classes; so the list names types that may not be on the class path (Reactor, Reactive Streams).
 */
public final class UnreplayableTypes {

    private static final Map<String, String> REASONS = reasons();

    private UnreplayableTypes() {
    }

    private static Map<String, String> reasons() {
        Map<String, String> m = new LinkedHashMap<>();
        String lazy = "a lazy, single-use sequence: a replay would have to re-run its source; return a List";
        m.put("java.util.stream.BaseStream", lazy);
        m.put("java.util.stream.Stream", lazy);
        m.put("java.util.stream.IntStream", lazy);
        m.put("java.util.stream.LongStream", lazy);
        m.put("java.util.stream.DoubleStream", lazy);
        m.put("java.util.Iterator", lazy);
        m.put("java.util.Spliterator", lazy);
        m.put("java.util.Enumeration", lazy);
        String io = "an open I/O handle: its content is read once and the handle cannot be rebuilt; return the bytes"
                + " or a value read from it";
        m.put("java.io.InputStream", io);
        m.put("java.io.OutputStream", io);
        m.put("java.io.Reader", io);
        m.put("java.io.Writer", io);
        m.put("java.nio.channels.Channel", io);
        m.put("java.lang.AutoCloseable", "a resource to close: it cannot be rebuilt from a record");
        String jdbc = "a live JDBC resource bound to a connection; return the values read from it";
        m.put("java.sql.Connection", jdbc);
        m.put("java.sql.Statement", jdbc);
        m.put("java.sql.ResultSet", jdbc);
        m.put("javax.sql.DataSource", jdbc);
        String async = "an asynchronous result: the outcome is not known when the method returns, so there is nothing"
                + " to record; make the method that completes it idempotent instead";
        m.put("java.util.concurrent.Future", async);
        m.put("java.util.concurrent.CompletionStage", async);
        m.put("java.util.concurrent.Flow$Publisher", async);
        m.put("org.reactivestreams.Publisher", async);
        m.put("reactor.core.publisher.Mono", async);
        m.put("reactor.core.publisher.Flux", async);
        String live = "a live runtime object, not data";
        m.put("java.lang.Thread", live);
        m.put("java.lang.ThreadGroup", live);
        m.put("java.lang.Process", live);
        m.put("java.lang.ProcessHandle", live);
        m.put("java.lang.ClassLoader", live);
        m.put("java.util.concurrent.Executor", live);
        m.put("java.util.concurrent.locks.Lock", live);
        m.put("java.lang.ref.Reference", live);
        m.put("java.net.Socket", live);
        m.put("java.net.ServerSocket", live);
        m.put("java.lang.Class", "a stored row would name a class to load");
        m.put("java.lang.reflect.Member", "a stored row would name a class and member to load");
        return Map.copyOf(m);
    }

    /** Every refused class name (binary names, {@code $} for nested). */
    public static final Set<String> NAMES = REASONS.keySet();

    /** Every refused class name (binary names, {@code $} for nested) with the reason. */
    public static Map<String, String> all() {
        return REASONS;
    }

    /**
     * Why values of {@code type} cannot be replayed: the reason of the first refused name among {@code type}, its
     * superclasses and its interfaces; empty if none is refused.
     */
    public static Optional<String> reason(Class<?> type) {
        Deque<Class<?>> todo = new ArrayDeque<>();
        Set<Class<?>> seen = new HashSet<>();
        todo.add(type);
        while (!todo.isEmpty()) {
            Class<?> c = todo.poll();
            if (!seen.add(c)) {
                continue;
            }
            String why = REASONS.get(c.getName());
            if (why != null) {
                return Optional.of(c == type ? why : "it is a " + c.getName() + ": " + why);
            }
            if (c.getSuperclass() != null) {
                todo.add(c.getSuperclass());
            }
            todo.addAll(java.util.List.of(c.getInterfaces()));
        }
        return Optional.empty();
    }
}
