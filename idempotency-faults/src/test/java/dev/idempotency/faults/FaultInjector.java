package dev.idempotency.faults;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.internal.Keys;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The application's {@code DataSource}: the pool of a {@link FaultDatabase}, every connection wrapped so that an
 * armed fault strikes at its step, once.
 *
 * <ul>
 *   <li>{@link Step#CLAIM} and {@link Step#RECORD} are armed for one key ({@link #arm(Step, String, String)}): they
 *       strike when a statement bound to that key's hash executes the insert into the idempotency table, or its
 *       update to {@code COMPLETED}, on whatever thread (the engine writes an irreversible claim on a connection and
 *       a thread of its own);</li>
 *   <li>{@link Step#METHOD}, {@link Step#COMMIT} and {@link Step#LOST_COMMIT_REPLY} are armed for the calling
 *       thread: the method calls {@link #methodStep()} (the connection bound to its transaction dies), the next
 *       {@code commit()} on the thread dies before it runs, or runs and then throws.</li>
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
    /** CLAIM and RECORD faults waiting for a statement on their key's hash; and the ones that struck. */
    private final Map<ByteBuffer, Step> armedKeys = new ConcurrentHashMap<>();
    private final Map<ByteBuffer, Step> firedKeys = new ConcurrentHashMap<>();
    private final AtomicInteger injected = new AtomicInteger();
    private final Map<Step, AtomicInteger> byStep = new ConcurrentHashMap<>();

    FaultInjector(FaultDatabase database) {
        super(database.pool());
        this.database = database;
        this.pool = database.pool();
    }

    /** The hash the store knows a key by (no tenant scope): what a CLAIM or RECORD fault is armed for. */
    static byte[] keyHash(String operation, String idemKey) {
        return Keys.hash(operation, "", Keys.normalize(idemKey));
    }

    /**
     * Arms {@code step} for the call of {@code operation} with {@code idemKey}: CLAIM and RECORD for the statements
     * of that key, on any thread; the other steps for this thread.
     */
    void arm(Step step, String operation, String idemKey) {
        if (step == Step.CLAIM || step == Step.RECORD) {
            ByteBuffer id = ByteBuffer.wrap(keyHash(operation, idemKey));
            firedKeys.remove(id);
            armedKeys.put(id, step);
        } else {
            arm(step);
        }
    }

    /** Arms METHOD, COMMIT or LOST_COMMIT_REPLY on this thread. */
    void arm(Step step) {
        if (step == Step.CLAIM || step == Step.RECORD) {
            throw new IllegalArgumentException(step + " is armed for a key: arm(step, operation, idemKey)");
        }
        armed.set(step);
        firedHere.remove();
    }

    /** Disarms the faults of this thread; returns the step that struck since {@link #arm}, if one did. */
    @Nullable Step disarm() {
        armed.remove();
        Step fired = firedHere.get();
        firedHere.remove();
        return fired;
    }

    /** Disarms the faults of this thread and of the key; returns the step that struck, if one did. */
    @Nullable Step disarm(String operation, String idemKey) {
        ByteBuffer id = ByteBuffer.wrap(keyHash(operation, idemKey));
        armedKeys.remove(id);
        Step keyed = firedKeys.remove(id);
        Step here = disarm();
        return keyed != null ? keyed : here;
    }

    /** Disarms every fault of every key (the threads' own end with their attempts). */
    void disarmAllKeys() {
        armedKeys.clear();
        firedKeys.clear();
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
        count(step);
        return true;
    }

    /** Takes the fault armed for one of the bound hashes at {@code step}, if there is one. */
    private boolean takeKeyed(Step step, List<ByteBuffer> bound) {
        for (ByteBuffer id : bound) {
            if (armedKeys.remove(id, step)) {
                firedKeys.put(id, step);
                count(step);
                return true;
            }
        }
        return false;
    }

    private void count(Step step) {
        injected.incrementAndGet();
        byStep.computeIfAbsent(step, s -> new AtomicInteger()).incrementAndGet();
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
        // the insert alone, or inside the dialect's one-round-trip claim (PostgreSQL: SAVEPOINT ...; INSERT ...; MariaDB:
        // SET STATEMENT ... FOR INSERT ..., or the CALL of the table's claim procedure)
        String table = database.tables.idempotency().toUpperCase(Locale.ROOT);
        return s.contains("INSERT INTO " + table + " ") || s.startsWith("CALL " + table + "_CLAIM_V1(");
    }

    private boolean isRecord(String sql) {
        String s = sql.stripLeading().toUpperCase(Locale.ROOT);
        return s.startsWith("UPDATE") && s.contains(database.tables.idempotency().toUpperCase(Locale.ROOT))
                && s.contains("STATUS = 'COMPLETED'");
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

        boolean dead() {
            return dead;
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

        SQLException gone(String what) {
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
                Step step = isClaim(sql) ? Step.CLAIM : isRecord(sql) ? Step.RECORD : null;
                if (step != null) {
                    PreparedStatement statement = (PreparedStatement) call(method, args);
                    return Proxy.newProxyInstance(FaultInjector.class.getClassLoader(),
                            new Class<?>[] {PreparedStatement.class}, new Statement(this, statement, step));
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

    /** A claim or record statement: strikes at its execution when a fault is armed for a key hash bound to it. */
    private final class Statement implements InvocationHandler {
        private final Wrapped connection;
        private final PreparedStatement real;
        private final Step step;
        private final List<ByteBuffer> bound = new ArrayList<>();

        Statement(Wrapped connection, PreparedStatement real, Step step) {
            this.connection = connection;
            this.real = real;
            this.step = step;
        }

        @Override
        public @Nullable Object invoke(Object proxy, Method method, Object @Nullable [] args) throws Throwable {
            String name = method.getName();
            if ((name.equals("setBytes") || name.equals("setObject")) && args != null && args.length >= 2
                    && args[1] instanceof byte[] bytes) {
                bound.add(ByteBuffer.wrap(bytes.clone()));
            } else if (name.equals("clearParameters")) {
                bound.clear();
            } else if ((name.startsWith("execute")) && (args == null || args.length == 0)
                    && takeKeyed(step, bound)) {
                connection.kill();
                if (connection.dead()) {
                    throw connection.gone("at " + (step == Step.CLAIM ? "the claim" : "the record"));
                }
                // a real server: the statement reaches a dead session and fails by itself
            } else if (name.equals("equals")) {
                return proxy == (args == null ? null : args[0]);
            } else if (name.equals("hashCode")) {
                return System.identityHashCode(proxy);
            }
            try {
                return method.invoke(real, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        }
    }
}
