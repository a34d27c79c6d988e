package dev.idempotency.sample.order;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.EnableIdempotency;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.web.IdempotentRequestHandlerAdapter;
import dev.idempotency.web.ProblemDetailsErrorReportValve;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.sql.DataSource;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.LifecycleState;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.core.StandardContext;
import org.apache.catalina.core.StandardHost;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.util.FileSystemUtils;
import org.springframework.web.context.support.AnnotationConfigWebApplicationContext;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.config.annotation.EnableWebMvc;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;

/**
 * The order service on an embedded Tomcat, listening on 127.0.0.1: plain Spring MVC (no Spring Boot), embedded H2,
 * and, protected, {@code @EnableIdempotency} with the JDBC store and the {@link IdempotentRequestHandlerAdapter} that
 * applies {@code @IdempotentRequest}. Unprotected it is the very same service without those three beans.
 */
final class OrderServer implements AutoCloseable {

    private final Tomcat tomcat;
    private final AnnotationConfigWebApplicationContext context;
    private final Path baseDir;
    private final Arrivals arrivals;
    private final int port;

    private OrderServer(Tomcat tomcat, AnnotationConfigWebApplicationContext context, Path baseDir, Arrivals arrivals,
            int port) {
        this.tomcat = tomcat;
        this.context = context;
        this.baseDir = baseDir;
        this.arrivals = arrivals;
        this.port = port;
    }

    /**
     * Starts the service.
     *
     * @param port    the port to listen on; 0 for a free one
     * @param protect whether {@code @IdempotentRequest} is applied
     * @param timings the service's {@link Timings#processingTime()}
     */
    static OrderServer start(int port, boolean protect, Timings timings) {
        Path baseDir;
        try {
            baseDir = Files.createTempDirectory("order-service-tomcat");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        AnnotationConfigWebApplicationContext context = new AnnotationConfigWebApplicationContext();
        context.setClassLoader(OrderServer.class.getClassLoader());
        context.register(protect ? Protected.class : Service.class);
        context.addBeanFactoryPostProcessor(beans -> beans.registerSingleton("timings", timings));
        Arrivals arrivals = new Arrivals();

        Tomcat tomcat = new Tomcat();
        tomcat.setSilent(true);   // Tomcat would set the web application's logger to INFO
        tomcat.setBaseDir(baseDir.toString());
        // what Tomcat refuses before Spring sees it (a 10 000-character key, a DEL byte in a header) is answered as
        // problem details too, not with Tomcat's HTML page (Spring Boot does this itself)
        ((StandardHost) tomcat.getHost()).setErrorReportValveClass(ProblemDetailsErrorReportValve.class.getName());
        Connector connector = tomcat.getConnector();
        connector.setPort(port);
        connector.setProperty("address", "127.0.0.1");
        StandardContext web = (StandardContext) tomcat.addContext("", baseDir.toString());
        // the sample's classes, Spring's included, come from the class loader that loaded this class (exec:java's,
        // a test's): Tomcat's web application class loader would not see them
        web.setParentClassLoader(OrderServer.class.getClassLoader());
        web.setClearReferencesRmiTargets(false);
        web.setClearReferencesThreadLocals(false);
        FilterDef filter = new FilterDef();
        filter.setFilterName("arrivals");
        filter.setFilter(arrivals);
        web.addFilterDef(filter);
        FilterMap mapping = new FilterMap();
        mapping.setFilterName("arrivals");
        mapping.addURLPatternDecoded("/*");
        web.addFilterMap(mapping);
        // the DispatcherServlet refreshes the Spring context when Tomcat starts it
        Tomcat.addServlet(web, "orders", new DispatcherServlet(context)).setLoadOnStartup(1);
        web.addServletMappingDecoded("/", "orders");
        try {
            tomcat.start();
            if (connector.getState() != LifecycleState.STARTED) {
                throw new IllegalStateException("the order service could not listen on 127.0.0.1:" + port
                        + " (is the port in use?)");
            }
            if (!context.isActive()) {
                throw new IllegalStateException("the order service's Spring context did not start: see the log above");
            }
        } catch (LifecycleException | RuntimeException e) {
            stop(tomcat, context, baseDir);
            throw e instanceof RuntimeException r ? r : new IllegalStateException("Tomcat did not start", e);
        }
        return new OrderServer(tomcat, context, baseDir, arrivals, connector.getLocalPort());
    }

    int port() {
        return port;
    }

    String baseUrl() {
        return "http://127.0.0.1:" + port;
    }

    Arrivals arrivals() {
        return arrivals;
    }

    /** The orders the service wrote for an approval. */
    List<OrderReceipt> ordersFor(String approvalNo) {
        return orders().ordersFor(approvalNo);
    }

    OrderService orders() {
        return context.getBean(OrderService.class);
    }

    @Override
    public void close() {
        stop(tomcat, context, baseDir);
    }

    private static void stop(Tomcat tomcat, AnnotationConfigWebApplicationContext context, Path baseDir) {
        try {
            tomcat.stop();
            tomcat.destroy();
        } catch (LifecycleException e) {
            throw new IllegalStateException("Tomcat did not stop", e);
        } finally {
            // the DispatcherServlet does not close a context it was given
            context.close();
            FileSystemUtils.deleteRecursively(baseDir.toFile());
        }
    }

    /** The service without idempotency: Spring MVC, H2, transactions. */
    @Configuration(proxyBeanMethods = false)
    @EnableWebMvc
    @EnableTransactionManagement
    static class Service {

        @Bean(destroyMethod = "shutdown")
        EmbeddedDatabase dataSource() {
            return new EmbeddedDatabaseBuilder()
                    .setType(EmbeddedDatabaseType.H2)
                    .generateUniqueName(true)
                    // the idempotency table, from the very script the JDBC store ships
                    .addScript("classpath:dev/idempotency/jdbc/schema-h2.sql")
                    .addScript("classpath:dev/idempotency/sample/order/orders-h2.sql")
                    .build();
        }

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        OrderService orderService(DataSource dataSource, Timings timings) {
            return new OrderService(dataSource, timings.processingTime());
        }

        @Bean
        OrderController orderController(OrderService orderService) {
            return new OrderController(orderService);
        }

        @Bean
        OrderController.Problems orderProblems() {
            return new OrderController.Problems();
        }
    }

    /** The same service with the guard: what a plain Spring MVC application declares (Spring Boot does it for you). */
    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency
    @Import(Service.class)
    static class Protected {

        @Bean
        IdempotencyStore idempotencyStore(DataSource dataSource) {
            return JdbcIdempotencyStore.builder(dataSource).build();
        }

        @Bean
        IdempotentRequestHandlerAdapter idempotentRequests(IdempotentExecutor executor,
                RequestMappingHandlerAdapter mvc) {
            return IdempotentRequestHandlerAdapter.builder(executor, mvc).build();
        }
    }
}
