package dev.idempotency.faults;

import com.zaxxer.hikari.HikariDataSource;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The application's {@code DataSource}: the pool of a {@link FaultDatabase}, every connection wrapped so that a
 * fault armed on the calling thread ({@link #arm(Step)}) strikes at its step, once.
 *
 * <ul>
 *   <li>{@link Step#CLAIM} and {@link Step#RECORD}: when the connection prepares the insert into the idempotency
 *       table, or its update to {@code COMPLETED};</li>
 *   <li>{@link Step#METHOD}: when the method calls {@link #methodStep()} (the connection bound to its transaction);</li>
 *   <li>{@link Step#COMMIT}: on the next {@code commit()}, before it runs; {@link Step#LOST_COMMIT_REPLY} on the
 *       next {@code commit()}, after it ran.</li>
 * </ul>
 *
 * <p>A strike kills the connection: PostgreSQL and MariaDB for real, from another connection; on H2 the injector
 * plays the server (rolls the connection's work back and fails every later call on it, as a dead socket would).
 * A killed connection is evicted from the pool when it is closed. A lost commit reply commits for real, then throws.
 */
final class FaultInjector extends DelegatingDataSource {

    private final FaultDatabase database;
    private final HikariDataSource pool;
    private final ThreadLocal<@Nullable Step> armed = new ThreadLocal<>();
    private final ThreadLocal<@Nullable Step> firedHere = new ThreadLocal<>();
    private final AtomicInteger injected = new AtomicInteger();
    private final Map<Step, AtomicInteger> byStep = new ConcurrentHashMap<>();

    FaultInjector(FaultDatabase database) {
        super(database.pool());
        this.database = database;
        this.pool = database.pool();
    }

    /** Arms {@code step} on this thread: the next time a call on this thread reaches it, the fault strikes, once. */
    void arm(Step step) {
        armed.set(step);
        firedHere.remove();
    }

    /** Disarms this thread; returns the step that struck since {@link #arm}, if one did. */
    @Nullable Step disarm() {
        armed.remove();
        Step fired = firedHere.get();
        firedHere.remove();
        return fired;
    }

    /** How many faults struck so far, every thread and step together. */
    int injected() {
        return injected.get();
    }

    int injected(Step step) {
        AtomicInteger n = byStep.get(step);
        return n == null ? 0 : n.get();
    }

    /**
     * The hook a service method calls while it runs: with {@link Step#METHOD} armed, the connection of the method's
     * transaction dies here; without a transaction there is no connection to kill, and the method fails instead.
     */
    void methodStep() {
        if (!take(Step.METHOD)) {
            return;
        }
        ConnectionHolder holder = (ConnectionHolder) TransactionSynchronizationManager.getResource(this);
        if (holder == null || !holder.isSynchronizedWithTransaction()) {
            throw new IllegalStateException("injected: the method's process lost its connection");
        }
        Connection connection = holder.getConnection();
        if (!Proxy.isProxyClass(connection.getClass())
                || !(Proxy.getInvocationHandler(connection) instanceof Wrapped wrapped)) {
            throw new IllegalStateException("the transaction's connection is not one of the injector's");
        }
        wrapped.kill();
    }

    private boolean take(Step step) {
        if (armed.get() != step) {
            return false;
        }
        armed.remove();
        firedHere.set(step);
        injected.incrementAndGet();
        byStep.computeIfAbsent(step, s -> new AtomicInteger()).incrementAndGet();
        return true;
    }

    @Override
    public Connection getConnection() throws SQLException {
        return wrap(super.getConnection());
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return wrap(super.getConnection(username, password));
    }

    private Connection wrap(Connection real) {
        return (Connection) Proxy.newProxyInstance(FaultInjector.class.getClassLoader(),
                new Class<?>[] {Connection.class}, new Wrapped(real));
    }

    private boolean isClaim(String sql) {
        String s = sql.stripLeading().toUpperCase(Locale.ROOT);
        return s.startsWith("INSERT") && s.contains(database.tables.idempotency().toUpperCase(Locale.ROOT));
    }

    private boolean isRecord(String sql) {
        String s = sql.stripLeading().toUpperCase(Locale.ROOT);
        return s.startsWith("UPDATE") && s.contains(database.tables.idempotency().toUpperCase(Locale.ROOT))
                && s.contains("STATUS = 'COMPLETED'") && s.contains("STATUS = 'IN_FLIGHT'");
    }

    /** One connection of the pool, with the faults of this thread. */
    private final class Wrapped implements InvocationHandler {
        private final Connection real;
        /** H2 only: the injector killed it, every later call fails. */
        private volatile boolean dead;
        private volatile boolean killed;

        Wrapped(Connection real) {
            this.real = real;
        }

        void kill() {
            killed = true;
            if (database.killsForReal()) {
                String id;
                try {
                    id = database.sessionId(real);
                } catch (SQLException e) {
                    throw new IllegalStateException("cannot read the session id of the victim", e);
                }
                database.kill(id);
            } else {
                try {
                    if (!real.getAutoCommit()) {
                        real.rollback(); // what the server does with the work of a session it loses
                    }
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
                dead = true;
            }
        }

        private SQLException gone(String what) {
            return new SQLException("injected: the connection was killed (" + what + ")", "08006");
        }

        @Override
        public @Nullable Object invoke(Object proxy, Method method, Object @Nullable [] args) throws Throwable {
            String name = method.getName();
            switch (name) {
                case "close":
                    if (killed) {
                        pool.evictConnection(real);
                        return null;
                    }
                    return call(method, args);
                case "isClosed":
                    return killed && dead ? Boolean.TRUE : call(method, args);
                case "equals":
                    return proxy == (args == null ? null : args[0]);
                case "hashCode":
                    return System.identityHashCode(proxy);
                case "toString":
                    return "FaultInjector(" + real + ")";
                case "unwrap":
                case "isWrapperFor":
                    return call(method, args);
                default:
                    break;
            }
            if (dead) {
                throw gone(name);
            }
            if (name.equals("prepareStatement") && args != null && args.length > 0 && args[0] instanceof String sql) {
                if ((isClaim(sql) && take(Step.CLAIM)) || (isRecord(sql) && take(Step.RECORD))) {
                    kill();
                    if (dead) {
                        throw gone("at " + (isClaim(sql) ? "the claim" : "the record"));
                    }
                    // a real server: the statement reaches a dead session and fails by itself
                }
            } else if (name.equals("commit")) {
                if (take(Step.COMMIT)) {
                    kill();
                    if (dead) {
                        throw gone("before the commit");
                    }
                } else if (take(Step.LOST_COMMIT_REPLY)) {
                    call(method, args);
                    killed = true;
                    dead = true;
                    throw new SQLException("injected: the commit reached the database, its reply was lost", "08006");
                }
            }
            return call(method, args);
        }

        private @Nullable Object call(Method method, Object @Nullable [] args) throws Throwable {
            try {
                return method.invoke(real, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        }
    }
}
