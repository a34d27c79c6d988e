package dev.idempotency.web;

import dev.idempotency.jdbc.JdbcDialect;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/** {@link OrderApp} on an embedded Tomcat on a free port, with its own idempotency and order tables, dropped at close. */
final class OrderServer implements AutoCloseable {

    final ConfigurableApplicationContext context;
    final String base;
    final String table;
    final OrderApp.Probe probe;

    private OrderServer(ConfigurableApplicationContext context, String table) {
        this.context = context;
        this.table = table;
        this.base = "http://127.0.0.1:" + ((WebServerApplicationContext) context).getWebServer().getPort();
        this.probe = context.getBean(OrderApp.Probe.class);
    }

    static OrderServer start(String... properties) {
        String table = "idem_web_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        List<String> all = new ArrayList<>(List.of(properties));
        all.add("server.port=0");
        all.add("idempotency.jdbc.table-name=" + table);
        all.add("idempotency.jdbc.initialize-schema=always");
        all.add("idempotency.purge.enabled=false");
        return new OrderServer(new SpringApplicationBuilder(OrderApp.class).properties(all.toArray(String[]::new)).run(),
                table);
    }

    static OrderServer onH2(String... properties) {
        List<String> all = new ArrayList<>(List.of(properties));
        all.add("spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        return start(all.toArray(String[]::new));
    }

    @Override
    public void close() {
        JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
        try {
            jdbc.execute("drop table " + probe.table);
            // the table and what the shipped script made beside it (PostgreSQL's digest domain)
            JdbcDialect.of(context.getBean(javax.sql.DataSource.class)).dropStatements(table).forEach(jdbc::execute);
        } finally {
            context.close();
        }
    }
}
