package dev.idempotency.spring.edges;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * A data source whose next commit, when armed, reaches the database and then fails as if its reply had been lost on
 * the network: the transaction is committed, the caller is told it is not ({@code STATUS_UNKNOWN} to Spring). It
 * counts the connections asked of it.
 */
final class LosingCommitReplies extends DelegatingDataSource {

    private final AtomicBoolean armed = new AtomicBoolean();
    private final AtomicInteger borrowed = new AtomicInteger();

    LosingCommitReplies(DataSource target) {
        super(target);
    }

    /** The next commit on any connection of this data source loses its reply. */
    void loseNextCommitReply() {
        armed.set(true);
    }

    /** How many connections were asked of this data source so far. */
    int borrowed() {
        return borrowed.get();
    }

    @Override
    public Connection getConnection() throws SQLException {
        borrowed.incrementAndGet();
        return wrap(super.getConnection());
    }

    private Connection wrap(Connection target) {
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    Object result;
                    try {
                        result = method.invoke(target, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                    if (method.getName().equals("commit") && armed.compareAndSet(true, false)) {
                        throw new SQLException("connection reset while reading the reply to COMMIT (injected)",
                                "08006");
                    }
                    return result;
                });
    }
}
