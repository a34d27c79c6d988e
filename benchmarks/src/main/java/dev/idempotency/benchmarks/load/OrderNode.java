package dev.idempotency.benchmarks.load;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.Tier;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.EnableIdempotency;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.web.IdempotentRequest;
import dev.idempotency.web.IdempotentRequestHandlerAdapter;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.LifecycleState;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.core.StandardContext;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.util.FileSystemUtils;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.support.AnnotationConfigWebApplicationContext;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.config.annotation.EnableWebMvc;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;

/**
 * One application node of the load run: the order service over HTTP on an embedded Tomcat (plain Spring MVC, as
 * {@code samples/order-service} is built), on PostgreSQL through HikariCP, in a JVM of its own that {@link LoadRun}
 * starts as a child process. Two endpoints run the same transaction, the insert of one order row:
 * <ul>
 *   <li>{@code POST /orders}: {@code @IdempotentRequest(tier = REVERSIBLE)} and {@code @Transactional}, applied by the
 *       {@link IdempotentRequestHandlerAdapter} with {@code @EnableIdempotency} and the {@link JdbcIdempotencyStore}
 *       on the same pool: the claim, the order and the recorded response commit together; a repeated key gets the
 *       recorded {@code 201} back;</li>
 *   <li>{@code POST /orders/unguarded}: the same method without the annotation; every request places an order.</li>
 * </ul>
 *
 * <p>Arguments: the JDBC URL, the orders table, the idempotency table (both made by {@link LoadRun}), the pool size.
 * {@code GET /in-flight} answers how many requests it is serving. It listens on a free port of 127.0.0.1, prints {@value #LISTENING}{@code <port>} on standard output, and stops when
 * its standard input ends (the parent exited or closed it) or on SIGTERM.
 */
public final class OrderNode {

    /** The line a node prints once it serves, followed by its port. */
    static final String LISTENING = "order node listening on 127.0.0.1:";
    /** The path that answers how many requests the node is serving. */
    static final String IN_FLIGHT_PATH = "/in-flight";

    private OrderNode() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            throw new IllegalArgumentException("usage: OrderNode <jdbc url> <orders table> <idempotency table> <pool>"
                    + ", was " + args.length + " arguments");
        }
        Settings settings = new Settings(args[0], args[1], args[2], Integer.parseInt(args[3]));
        Path baseDir = Files.createTempDirectory("load-node-tomcat");
        AnnotationConfigWebApplicationContext context = new AnnotationConfigWebApplicationContext();
        context.setClassLoader(OrderNode.class.getClassLoader());
        context.register(Config.class);
        context.addBeanFactoryPostProcessor(beans -> beans.registerSingleton("settings", settings));

        Tomcat tomcat = new Tomcat();
        tomcat.setSilent(true);
        tomcat.setBaseDir(baseDir.toString());
        Connector connector = tomcat.getConnector();
        connector.setPort(0);
        connector.setProperty("address", "127.0.0.1");
        // a load client keeps its connections: no close after Tomcat's default of 100 requests per connection
        connector.setProperty("maxKeepAliveRequests", "-1");
        StandardContext web = (StandardContext) tomcat.addContext("", baseDir.toString());
        web.setParentClassLoader(OrderNode.class.getClassLoader());
        web.setClearReferencesRmiTargets(false);
        web.setClearReferencesThreadLocals(false);
        FilterDef inFlight = new FilterDef();
        inFlight.setFilterName("in-flight");
        inFlight.setFilter(new InFlight());
        web.addFilterDef(inFlight);
        FilterMap everything = new FilterMap();
        everything.setFilterName("in-flight");
        everything.addURLPatternDecoded("/*");
        web.addFilterMap(everything);
        Tomcat.addServlet(web, "orders", new DispatcherServlet(context)).setLoadOnStartup(1);
        web.addServletMappingDecoded("/", "orders");
        Runnable stop = () -> {
            try {
                tomcat.stop();
                tomcat.destroy();
            } catch (LifecycleException e) {
                System.err.println("Tomcat did not stop: " + e);
            } finally {
                context.close();
                FileSystemUtils.deleteRecursively(baseDir.toFile());
            }
        };
        tomcat.start();
        if (connector.getState() != LifecycleState.STARTED || !context.isActive()) {
            stop.run();
            throw new IllegalStateException("the order node did not start (connector " + connector.getState()
                    + ", Spring context " + (context.isActive() ? "active" : "not active") + ")");
        }
        Runtime.getRuntime().addShutdownHook(new Thread(stop, "order-node-stop"));
        System.out.println(LISTENING + connector.getLocalPort());
        System.out.flush();
        // stop with the parent: its end closes our standard input
        InputStream in = System.in;
        try {
            while (in.read() >= 0) {
                // nothing is sent on it
            }
        } catch (IOException e) {
            // closed: the same as its end
        }
        System.exit(0);
    }

    /**
     * Counts the requests the node is serving, and answers {@code GET /in-flight} with that count (as text) without
     * counting itself: how {@link LoadRun} knows that a node has worked off the backlog of an overloaded step (the
     * requests its client gave up on are still served) before the next step starts.
     */
    static final class InFlight implements Filter {
        private final AtomicInteger count = new AtomicInteger();

        @Override
        public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
                throws IOException, ServletException {
            if (IN_FLIGHT_PATH.equals(((HttpServletRequest) request).getRequestURI())) {
                response.setContentType("text/plain");
                response.getWriter().print(count.get());
                return;
            }
            count.incrementAndGet();
            try {
                chain.doFilter(request, response);
            } finally {
                count.decrementAndGet();
            }
        }
    }

    /** What the node is told on its command line. */
    record Settings(String url, String ordersTable, String idempotencyTable, int poolSize) {
    }

    /** The body of {@code POST /orders}. */
    record OrderRequest(String approvalNo, String customerId, String sku, int quantity, BigDecimal unitPrice) {
    }

    /** The answer: the order placed. */
    record OrderReceipt(String orderId, String approvalNo, BigDecimal total, Instant createdAt) {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableWebMvc
    @EnableTransactionManagement
    @EnableIdempotency
    static class Config {

        @Bean(destroyMethod = "close")
        HikariDataSource dataSource(Settings settings) {
            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(settings.url());
            config.setMaximumPoolSize(settings.poolSize());
            config.setMinimumIdle(settings.poolSize());
            config.setPoolName("order-node");
            config.setConnectionTimeout(10_000);
            return new HikariDataSource(config);
        }

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        IdempotencyStore idempotencyStore(DataSource dataSource, Settings settings) {
            return JdbcIdempotencyStore.builder(dataSource).tableName(settings.idempotencyTable()).build();
        }

        @Bean
        IdempotentRequestHandlerAdapter idempotentRequests(IdempotentExecutor executor,
                RequestMappingHandlerAdapter mvc) {
            return IdempotentRequestHandlerAdapter.builder(executor, mvc).build();
        }

        @Bean
        Orders orders(DataSource dataSource, Settings settings) {
            return new Orders(new JdbcTemplate(dataSource), settings.ordersTable());
        }

        @Bean
        OrderController orderController(Orders orders) {
            return new OrderController(orders);
        }
    }

    /** The business logic: one order row, in the caller's transaction. */
    static final class Orders {
        private final JdbcTemplate jdbc;
        private final String insert;

        Orders(JdbcTemplate jdbc, String table) {
            this.jdbc = jdbc;
            this.insert = "INSERT INTO " + table
                    + " (order_id, approval_no, customer_id, total, created_at) VALUES (?, ?, ?, ?, ?)";
        }

        OrderReceipt place(OrderRequest request) {
            String orderId = "ORD-" + UUID.randomUUID();
            BigDecimal total = request.unitPrice().multiply(BigDecimal.valueOf(request.quantity()))
                    .setScale(2, RoundingMode.HALF_UP);
            Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
            jdbc.update(insert, orderId, request.approvalNo(), request.customerId(), total, Timestamp.from(now));
            return new OrderReceipt(orderId, request.approvalNo(), total, now);
        }
    }

    /** The two endpoints: one method body, with and without the guard. */
    @RestController
    static class OrderController {
        private final Orders orders;

        OrderController(Orders orders) {
            this.orders = orders;
        }

        @PostMapping("/orders")
        @IdempotentRequest(tier = Tier.REVERSIBLE, ttl = "24h")
        @Transactional
        public ResponseEntity<OrderReceipt> guarded(@RequestBody OrderRequest request) {
            return place(request);
        }

        @PostMapping("/orders/unguarded")
        @Transactional
        public ResponseEntity<OrderReceipt> unguarded(@RequestBody OrderRequest request) {
            return place(request);
        }

        private ResponseEntity<OrderReceipt> place(OrderRequest request) {
            OrderReceipt receipt = orders.place(request);
            return ResponseEntity.created(URI.create("/orders/" + receipt.orderId())).body(receipt);
        }
    }
}
