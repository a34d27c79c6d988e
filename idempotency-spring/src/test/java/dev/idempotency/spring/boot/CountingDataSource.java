package dev.idempotency.spring.boot;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DelegatingDataSource;

/** A {@code DataSource} that counts the SQL statements prepared or created on its connections. */
final class CountingDataSource extends DelegatingDataSource {

    private static final Set<String> STATEMENTS = Set.of("prepareStatement", "createStatement", "prepareCall");

    private final AtomicInteger statements = new AtomicInteger();

    CountingDataSource(DataSource target) {
        super(target);
    }

    /** Statements since the last reset. */
    int statements() {
        return statements.get();
    }

    void reset() {
        statements.set(0);
    }

    @Override
    public Connection getConnection() throws java.sql.SQLException {
        return counting(super.getConnection());
    }

    @Override
    public Connection getConnection(String username, String password) throws java.sql.SQLException {
        return counting(super.getConnection(username, password));
    }

    private Connection counting(Connection connection) {
        InvocationHandler handler = (proxy, method, args) -> {
            if (STATEMENTS.contains(method.getName())) {
                statements.incrementAndGet();
            }
            return invoke(connection, method, args);
        };
        return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                handler);
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
