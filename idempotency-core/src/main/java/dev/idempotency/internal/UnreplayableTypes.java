package dev.idempotency.internal;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;
import java.util.Set;

/**
 * Return types whose values cannot be recorded and replayed: they are consumed once, or they are handles on
 * something alive in this process only (a stream, an open connection, a running computation). A method declared to
 * return one of these, or a subtype, is refused. Internal: shared by the annotation processor (at compile time, by
 * name, without loading the classes) and the result codec (at run time).
 */
public final class UnreplayableTypes {

    /** The refused types, by binary name: a declared return type that is one of them or a subtype is refused. */
    public static final Set<String> NAMES = Set.of(
            "java.util.stream.BaseStream",
            "java.util.stream.Stream",
            "java.util.stream.IntStream",
            "java.util.stream.LongStream",
            "java.util.stream.DoubleStream",
            "java.util.Iterator",
            "java.util.Spliterator",
            "java.io.InputStream",
            "java.io.OutputStream",
            "java.io.Reader",
            "java.io.Writer",
            "java.sql.Connection",
            "java.sql.Statement",
            "java.sql.ResultSet",
            "java.nio.channels.Channel",
            // asynchronous results are not supported yet: the recorded value would be the future, not its outcome
            "java.util.concurrent.Future",
            "java.util.concurrent.CompletionStage",
            "java.lang.Thread");

    private UnreplayableTypes() {
    }

    /**
     * The refused type that {@code type} is or extends, if any (for the codec's run-time check).
     *
     * @return the binary name of the refused type, or empty when values of {@code type} can be replayed
     */
    public static Optional<String> refusedSupertype(Class<?> type) {
        Deque<Class<?>> pending = new ArrayDeque<>();
        pending.add(type);
        while (!pending.isEmpty()) {
            Class<?> c = pending.poll();
            if (NAMES.contains(c.getName())) {
                return Optional.of(c.getName());
            }
            if (c.getSuperclass() != null) {
                pending.add(c.getSuperclass());
            }
            pending.addAll(java.util.Arrays.asList(c.getInterfaces()));
        }
        return Optional.empty();
    }

    /** Why values of a refused type cannot be replayed, for messages. */
    public static final String REASON = "a stream, iterator, I/O handle, connection, future or thread is consumed once"
            + " or lives only in this process, so a replay could not return it";
}
