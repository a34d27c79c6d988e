package dev.idempotency.sample.plain;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.aspectj.WovenIdempotentAspect;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;

/**
 * An application without Spring: it configures the woven aspect once at startup with an executor on the JDBC store,
 * then a caller retries a checkout, with backoff, until a reply comes back. The first two replies are lost after the
 * order was written; the retries replay it. It prints one order.
 *
 * <p>Run it: {@code mvn -B -q -pl samples/plain-java -am package -DskipTests exec:java}.
 */
public final class PlainJavaSample {

    /** What happened: attempts made, the order the caller got, the orders in the table. */
    record Report(int attempts, String orderId, int ordersWritten) {
    }

    private PlainJavaSample() {
    }

    public static void main(String[] args) throws Exception {
        run(System.out, 2);
    }

    static Report run(PrintStream out, int lostReplies) throws SQLException, InterruptedException {
        DataSource dataSource = h2();
        // once, at startup: the store, the executor, the aspect that the compiler wove into OrderDesk
        JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(dataSource).build();
        WovenIdempotentAspect.configure(IdempotentExecutor.builder(store).build());

        AtomicInteger lost = new AtomicInteger(lostReplies);
        OrderDesk desk = new OrderDesk(dataSource, () -> lost.getAndDecrement() > 0);

        String cartId = "CART-42";   // the key: made once, outside the retry loop
        long backoffMillis = 20;
        for (int attempt = 1; ; attempt++) {
            try {
                String orderId = desk.checkout(cartId, 3);
                int orders = count(dataSource);
                out.println("attempt " + attempt + ": " + orderId);
                out.println("orders written: " + orders);
                return new Report(attempt, orderId, orders);
            } catch (OrderDesk.ReplyLostException e) {
                if (attempt == 5) {
                    throw e;
                }
                out.println("attempt " + attempt + ": " + e.getMessage() + "; retrying in " + backoffMillis + " ms");
                Thread.sleep(backoffMillis);
                backoffMillis *= 2;
            }
        }
    }

    private static DataSource h2() throws SQLException {
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:plain-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        try (Connection c = h2.getConnection(); Statement s = c.createStatement()) {
            // the schema script the JDBC store ships, and the sample's own table
            s.execute("RUNSCRIPT FROM 'classpath:/dev/idempotency/jdbc/schema-h2.sql'");
            s.execute("RUNSCRIPT FROM 'classpath:/orders-h2.sql'");
        }
        return h2;
    }

    private static int count(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM orders")) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
